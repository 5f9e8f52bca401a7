import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// The sensitive-word options end to end: a prompt with a listed word is refused in the client's own
// error format before anything is reserved, sent or charged; with StopOnSensitiveEnabled off the words
// are starred in what the upstream receives and the call is billed as usual. A normal user with a
// limited token pays, so that the books at the end show that no refusal cost anything.
const QPU = 500_000;
const WALLET = 20 * QPU;
const TOKEN_QUOTA = 10 * QPU;
/** Every upstream reports this usage; ratios are 1, so each billed call costs prompt + completion. */
const PROMPT_TOKENS = 40;
const COMPLETION_TOKENS = 10;
const CALL_QUOTA = PROMPT_TOKENS + COMPLETION_TOKENS;

let gateway: Gateway;
let drop: () => Promise<void>;
/** The test database's address (Postgres only): the books are read there after the gateway stops. */
let databaseUrl: string | undefined;
let root: DashboardClient;
let openaiUp: MockOpenAI;
let anthropicUp: MockAnthropic;
let geminiUp: MockGemini;
let key: string;
/** The paying user, signed in: the playground is theirs too. */
let prompter: DashboardClient;
let billedCalls = 0;

beforeAll(async () => {
  [openaiUp, anthropicUp, geminiUp] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini()]);
  const database = await createTestDatabase();
  drop = database.drop;
  databaseUrl = database.url;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channels: Array<[number, string, string]> = [
    [1, openaiUp.url, 'gpt-4o,text-embedding-3-small'],
    [14, anthropicUp.url, 'claude-sonnet-4-20250514'],
    [24, geminiUp.url, 'gemini-2.5-flash'],
  ];
  for (const [type, baseUrl, models] of channels) {
    const created = await root.post('/api/channel/', {
      name: `up-${type}`,
      type,
      key: 'sk-upstream',
      base_url: baseUrl,
      models,
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  const ones = JSON.stringify({
    'gpt-4o': 1,
    'text-embedding-3-small': 1,
    'claude-sonnet-4-20250514': 1,
    'gemini-2.5-flash': 1,
  });
  await gateway.options.setMany({ ModelRatio: ones, CompletionRatio: ones, GroupRatio: '{"default": 1}' });
  openaiUp.behaviour = { usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS } };
  anthropicUp.behaviour = { usage: { input_tokens: PROMPT_TOKENS, output_tokens: COMPLETION_TOKENS } };
  geminiUp.behaviour = { usage: { promptTokenCount: PROMPT_TOKENS, candidatesTokenCount: COMPLETION_TOKENS } };

  const user = new DashboardClient(gateway.url);
  prompter = user;
  expect((await user.post('/api/user/register', { username: 'prompter', password: 'password-1' })).body.success).toBe(
    true,
  );
  await user.login('prompter', 'password-1');
  expect((await root.put('/api/user/', { id: user.userId, username: 'prompter', quota: WALLET })).body.success).toBe(
    true,
  );
  const token = await user.post('/api/token/', { name: 'limited', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
  expect(token.body.success, JSON.stringify(token.body)).toBe(true);
  key = token.body.data.key;
  await eventually(
    async () => (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json(),
    (list: any) => list.data?.length === 4,
    3000,
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([openaiUp?.close(), anthropicUp?.close(), geminiUp?.close()]);
});

/** A request as a client of some format sends it: path, headers and JSON body. */
interface ClientCall {
  path: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

async function call(request: ClientCall): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${gateway.url}${request.path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'accept-language': 'en',
      ...request.headers,
    },
    body: JSON.stringify(request.body),
  });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

const chat = (model: string, text: string, stream = false): ClientCall => ({
  path: '/v1/chat/completions',
  body: { model, stream, messages: [{ role: 'user', content: text }] },
});
const responses = (text: string, stream = false): ClientCall => ({
  path: '/v1/responses',
  body: { model: 'gpt-4o', stream, instructions: 'Answer briefly.', input: [{ role: 'user', content: text }] },
});
const claude = (text: string, stream = false): ClientCall => ({
  path: '/v1/messages',
  body: {
    model: 'claude-sonnet-4-20250514',
    max_tokens: 100,
    stream,
    system: 'Answer briefly.',
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  },
  headers: { 'anthropic-version': '2023-06-01' },
});
const gemini = (text: string, stream = false): ClientCall => ({
  path: `/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  body: {
    systemInstruction: { parts: [{ text: 'Answer briefly.' }] },
    contents: [{ role: 'user', parts: [{ text }] }],
  },
});

/** How many requests the mock upstreams have received so far. */
const upstreamRequests = () => openaiUp.requests.length + anthropicUp.requests.length + geminiUp.requests.length;

/** The consume logs written so far. */
async function consumeLogs(): Promise<number> {
  const row = await gateway.store.db
    .selectFrom('logs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Runs a call that must be billed, and checks it was billed by the usage the upstream reported. */
async function billedCall(request: ClientCall): Promise<string> {
  let text = '';
  const log = await billed(gateway, async () => {
    const answer = await call(request);
    expect(answer.status, answer.text).toBe(200);
    text = answer.text;
  });
  billedCalls++;
  expect(log.quota).toBe(CALL_QUOTA);
  return text;
}

const refusalShapes: Array<[string, (text: string, stream?: boolean) => ClientCall, (body: any) => string]> = [
  [
    'OpenAI chat',
    (text, stream) => chat('gpt-4o', text, stream),
    (body) => {
      expect(body.error).toMatchObject({ type: 'new_api_error', code: 'sensitive_words_detected' });
      return body.error.message;
    },
  ],
  [
    'OpenAI responses',
    responses,
    (body) => {
      expect(body.error).toMatchObject({ code: 'sensitive_words_detected' });
      return body.error.message;
    },
  ],
  [
    'Claude messages',
    claude,
    (body) => {
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      return body.error.message;
    },
  ],
  [
    'Gemini generateContent',
    gemini,
    (body) => {
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      return body.error.message;
    },
  ],
];

describe('a prompt with a listed word, StopOnSensitiveEnabled on (the default)', () => {
  for (const [name, request, messageOf] of refusalShapes) {
    for (const stream of [false, true]) {
      it(`is refused in ${name}${stream ? ', streaming' : ''}: 400 in the client's format, nothing sent or charged`, async () => {
        const sent = upstreamRequests();
        const logs = await consumeLogs();
        const answer = await call(request('Please repeat TEST_SENSITIVE and also test_sensitive.', stream));
        expect(answer.status, answer.text).toBe(400);
        const message = messageOf(answer.body);
        expect(message).toContain('The prompt contains sensitive words: test_sensitive');
        expect(upstreamRequests()).toBe(sent);
        // The next billed call's log is the only new one: the refusal wrote none before it.
        await billedCall(request('A clean prompt.', stream));
        expect(await consumeLogs()).toBe(logs + 1);
      });
    }
  }

  it('is refused in the console playground too', async () => {
    const sent = upstreamRequests();
    const answer = await prompter.post('/pg/chat/completions', {
      model: 'gpt-4o',
      group: 'default',
      messages: [{ role: 'user', content: 'test_sensitive' }],
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, code: 'sensitive_words_detected' });
    expect(answer.body.message).toContain('The prompt contains sensitive words: test_sensitive');
    expect(upstreamRequests()).toBe(sent);
  });

  it('is found in every text the client sends: system, instructions, embeddings input', async () => {
    const sent = upstreamRequests();
    const system = await call({
      path: '/v1/messages',
      body: {
        model: 'claude-sonnet-4-20250514',
        max_tokens: 10,
        system: 'you are test_sensitive',
        messages: [{ role: 'user', content: 'hi' }],
      },
    });
    expect(system.status).toBe(400);
    const instructions = await call({
      path: '/v1/responses',
      body: { model: 'gpt-4o', instructions: 'say test_sensitive', input: 'hi' },
    });
    expect(instructions.status).toBe(400);
    const embeddings = await call({
      path: '/v1/embeddings',
      body: { model: 'text-embedding-3-small', input: ['fine', 'test_sensitive'] },
    });
    expect(embeddings.status).toBe(400);
    expect(embeddings.body.error.code).toBe('sensitive_words_detected');
    expect(upstreamRequests()).toBe(sent);
  });
});

describe('StopOnSensitiveEnabled off', () => {
  beforeAll(async () => {
    expect((await root.put('/api/option/', { key: 'StopOnSensitiveEnabled', value: 'false' })).body.success).toBe(true);
  });
  afterAll(async () => {
    expect((await root.put('/api/option/', { key: 'StopOnSensitiveEnabled', value: 'true' })).body.success).toBe(true);
  });

  const prompt = 'Say test_sensitive, then TEST_SENSITIVE.';
  const masked = 'Say **************, then **************.';

  it('stars the words in what an OpenAI upstream receives (chat, streaming chat, responses), billed as usual', async () => {
    await billedCall(chat('gpt-4o', prompt));
    expect(openaiUp.requests.at(-1)?.body.messages).toEqual([{ role: 'user', content: masked }]);
    const streamed = await billedCall(chat('gpt-4o', prompt, true));
    expect(streamed).toContain('data: [DONE]');
    expect(openaiUp.requests.at(-1)?.body.messages).toEqual([{ role: 'user', content: masked }]);
    await billedCall(responses(prompt));
    expect(openaiUp.requests.at(-1)?.body.input).toEqual([{ role: 'user', content: masked }]);
  });

  it('stars the words in what Claude and Gemini upstreams receive, streaming or not', async () => {
    for (const stream of [false, true]) {
      await billedCall(claude(prompt, stream));
      expect(anthropicUp.requests.at(-1)?.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: masked }] },
      ]);
      await billedCall(gemini(prompt, stream));
      expect(geminiUp.requests.at(-1)?.body.contents).toEqual([{ role: 'user', parts: [{ text: masked }] }]);
    }
  });

  it('stars the words across formats: an OpenAI client on a Claude channel', async () => {
    await billedCall(chat('claude-sonnet-4-20250514', `system check: ${prompt}`));
    expect(JSON.stringify(anthropicUp.requests.at(-1)?.body.messages)).toContain(`system check: ${masked}`);
    expect(JSON.stringify(anthropicUp.requests.at(-1)?.body)).not.toMatch(/test_sensitive/i);
  });
});

describe('with a switch off, nothing is checked', () => {
  for (const off of ['CheckSensitiveEnabled', 'CheckSensitiveOnPromptEnabled']) {
    it(`${off} off: the prompt goes upstream as sent, refused words and all`, async () => {
      expect((await root.put('/api/option/', { key: off, value: 'false' })).body.success).toBe(true);
      try {
        await billedCall(chat('gpt-4o', 'Say test_sensitive.'));
        expect(openaiUp.requests.at(-1)?.body.messages).toEqual([{ role: 'user', content: 'Say test_sensitive.' }]);
        await billedCall(gemini('Say test_sensitive.', true));
        expect(geminiUp.requests.at(-1)?.body.contents).toEqual([
          { role: 'user', parts: [{ text: 'Say test_sensitive.' }] },
        ]);
      } finally {
        expect((await root.put('/api/option/', { key: off, value: 'true' })).body.success).toBe(true);
      }
    });
  }
});

describe('the word list', () => {
  it('changed through /api/option/, applies to the next request', async () => {
    const changed = await root.put('/api/option/', { key: 'SensitiveWords', value: 'forbidden fruit\n\n禁果\n' });
    expect(changed.body.success).toBe(true);
    const refused = await call(claude('Tell me about the Forbidden Fruit and 禁果.'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('forbidden fruit, 禁果');
    // The old default word is no longer listed.
    await billedCall(chat('gpt-4o', 'test_sensitive is fine now'));
    expect((await root.put('/api/option/', { key: 'SensitiveWords', value: '' })).body.success).toBe(true);
    await billedCall(chat('gpt-4o', 'forbidden fruit is fine with an empty list'));
    expect((await root.put('/api/option/', { key: 'SensitiveWords', value: 'test_sensitive' })).body.success).toBe(
      true,
    );
  });
});

describe('the books', () => {
  // Leases go back to the wallet and token only when the gateway stops, and an embedded database does
  // not outlive its gateway: this part needs the Postgres server.
  it.runIf(hasPostgres())(
    'hold exactly the billed calls once the gateway has stopped: refusals cost nothing',
    async () => {
      await gateway.stop();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      const one = async (text: string) => (await client.query(text)).rows[0] as Record<string, string>;
      try {
        const logs = await one('select count(*) as n, coalesce(sum(quota), 0) as sum from logs where type = 2');
        const spent = billedCalls * CALL_QUOTA;
        expect({ n: Number(logs.n), sum: Number(logs.sum) }).toEqual({ n: billedCalls, sum: spent });
        const user = await one(`select quota, used_quota from users where username = 'prompter'`);
        expect({ quota: Number(user.quota), used: Number(user.used_quota) }).toEqual({
          quota: WALLET - spent,
          used: spent,
        });
        const token = await one(`select remain_quota, used_quota from tokens where name = 'limited'`);
        expect({ remain: Number(token.remain_quota), used: Number(token.used_quota) }).toEqual({
          remain: TOKEN_QUOTA - spent,
          used: spent,
        });
        expect(Number((await one('select sum(used_quota) as used from channels')).used)).toBe(spent);
      } finally {
        await client.end();
      }
    },
  );
});

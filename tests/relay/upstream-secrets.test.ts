import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockRealtime, startMockRealtime } from '../support/mock-realtime.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

// Issue 18, deliverable 4: an upstream error that quotes the channel's key (whole, truncated, URL-encoded,
// base64, inside JSON), a header override's credential or a gateway secret reaches neither the client (OpenAI,
// Claude and Gemini formats, streaming or not, in-stream error events, realtime, tasks) nor the logs a user
// reads, while the message around it still says what went wrong.
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** `/` and `+` make its URL-encoded and base64 forms differ from the raw one. */
const KEY = `sk-leak-${hex(12)}/${hex(6)}+${hex(6)}`;
const ORG_SECRET = `org-secret-${hex(10)}`;
const EPAY_SECRET = `epay-${hex(12)}`;

/** Each way an upstream has been seen to quote a key in its error message. */
const QUOTES: Record<string, (key: string) => string> = {
  whole: (key) => `Incorrect API key provided: ${key}.`,
  truncated: (key) => `Incorrect API key provided: ${key.slice(0, 12)}...${key.slice(-10)}.`,
  urlEncoded: (key) => `Incorrect API key provided in https://up.example/v1?key=${encodeURIComponent(key)}`,
  base64: (key) => `Incorrect API key provided: Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
  json: (key) => `Incorrect API key provided: ${JSON.stringify({ credentials: { api_key: key } })}`,
};

/** The pieces of a secret whose presence in a text is a leak. */
function leaks(text: string): string[] {
  const forms: Record<string, string> = {
    whole: KEY,
    head: KEY.slice(0, 12),
    middle: KEY.slice(12, 24),
    tail: KEY.slice(-10),
    urlEncoded: encodeURIComponent(KEY),
    base64: Buffer.from(`user:${KEY}`).toString('base64').slice(8, -8),
    org: ORG_SECRET,
    epay: EPAY_SECRET,
  };
  return Object.entries(forms)
    .filter(([, form]) => text.includes(form))
    .map(([name]) => name);
}

/**
 * One upstream for OpenAI, Claude and Gemini channels: every call fails with `message()` in the protocol's
 * error shape, or, with `inStream` set and a streaming request, answers 200 and an in-stream error event.
 */
interface QuotingUpstream {
  url: string;
  message: () => string;
  inStream: boolean;
  /** Answer the error with a 200, as some upstreams do. */
  errorWith200: boolean;
  close(): Promise<void>;
}

async function startQuotingUpstream(): Promise<QuotingUpstream> {
  const upstream: QuotingUpstream = {
    url: '',
    message: () => QUOTES.whole!(KEY),
    inStream: false,
    errorWith200: false,
    close: async () => {},
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { stream?: boolean };
      const message = upstream.message();
      const protocol = path.includes('/messages') ? 'claude' : path.includes('generateContent') ? 'gemini' : 'openai';
      const streaming = protocol === 'gemini' ? path.includes('streamGenerateContent') : body.stream === true;
      if (upstream.inStream && streaming) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (protocol === 'claude') {
          res.end(
            `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message } })}\n\n`,
          );
        } else {
          res.end(`data: ${JSON.stringify({ error: { message, type: 'server_error', code: null } })}\n\n`);
        }
        return;
      }
      const status = upstream.errorWith200 ? 200 : protocol === 'gemini' ? 400 : 401;
      res.writeHead(status, { 'content-type': 'application/json' });
      if (protocol === 'claude') {
        res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message } }));
      } else if (protocol === 'gemini') {
        res.end(JSON.stringify({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }));
      } else {
        res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  upstream.close = () => new Promise((resolve) => server.close(() => resolve()));
  return upstream;
}

let gateway: Gateway;
let drop: () => Promise<void>;
let upstream: QuotingUpstream;
let realtime: MockRealtime;
let suno: MockSuno;
let root: DashboardClient;
let user: DashboardClient;
let key: string;
const channelIds: Record<string, number> = {};

beforeAll(async () => {
  [upstream, realtime, suno] = await Promise.all([
    startQuotingUpstream(),
    startMockRealtime(['not-the-channel-key']),
    startMockSuno(KEY),
  ]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { ERROR_LOG_ENABLED: 'true', TASK_POLL_INTERVAL_MS: '200' }),
  );
  root = await setupRoot(gateway.url);
  const channels: Array<[string, number, string, string, Record<string, unknown>?]> = [
    ['openai', 1, upstream.url, 'gpt-4o', { header_override: JSON.stringify({ 'X-Org-Secret': ORG_SECRET }) }],
    ['claude', 14, upstream.url, 'claude-sonnet-4-20250514'],
    ['gemini', 24, upstream.url, 'gemini-2.5-flash'],
    ['realtime', 1, realtime.url, 'gpt-realtime'],
    ['suno', 36, suno.url, 'suno_music'],
  ];
  for (const [name, type, baseUrl, models, extra] of channels) {
    const created = await root.post('/api/channel/', {
      name,
      type,
      key: KEY,
      base_url: baseUrl,
      models,
      group: 'default',
      auto_ban: 0,
      ...extra,
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  const listed = await root.get('/api/channel/?p=1&page_size=50');
  for (const item of listed.body.data.items as Array<{ id: number; name: string }>) channelIds[item.name] = item.id;
  await gateway.options.setMany({
    EpayKey: EPAY_SECRET,
    ModelPrice: JSON.stringify({ suno_music: 0.1, 'gpt-realtime': 0.01 }),
  });

  user = new DashboardClient(gateway.url);
  expect((await user.post('/api/user/register', { username: 'quoted', password: 'password-1' })).body.success).toBe(
    true,
  );
  await user.login('quoted', 'password-1');
  const funded = await root.put('/api/user/', { id: user.userId, username: 'quoted', quota: 10_000_000 });
  expect(funded.body.success, JSON.stringify(funded.body)).toBe(true);
  key = (await user.post('/api/token/', { name: 'quoted', unlimited_quota: true })).body.data.key;
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([upstream?.close(), realtime?.close(), suno?.close()]);
});

interface ClientCall {
  name: string;
  path: (stream: boolean) => string;
  body: (stream: boolean) => Record<string, unknown>;
}

const CLIENTS: ClientCall[] = [
  {
    name: 'openai',
    path: () => '/v1/chat/completions',
    body: (stream) => ({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'hi' }] }),
  },
  {
    name: 'claude',
    path: () => '/v1/messages',
    body: (stream) => ({
      model: 'claude-sonnet-4-20250514',
      stream,
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  },
  {
    name: 'gemini',
    path: (stream) => `/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    body: () => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
  },
];

async function call(client: ClientCall, stream: boolean): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gateway.url}${client.path(stream)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-language': 'en' },
    body: JSON.stringify(client.body(stream)),
  });
  return { status: response.status, text: await response.text() };
}

describe('upstream errors never carry secrets', () => {
  for (const client of CLIENTS) {
    for (const stream of [false, true]) {
      it(`${client.name}${stream ? ' streaming' : ''}: every quoted form of the key is masked, the message kept`, async () => {
        upstream.inStream = false;
        for (const [form, quote] of Object.entries(QUOTES)) {
          upstream.message = () => quote(KEY);
          const answer = await call(client, stream);
          expect(answer.status, `${form}: ${answer.text}`).toBeGreaterThanOrEqual(400);
          expect(leaks(answer.text), `${form}: ${answer.text}`).toEqual([]);
          expect(answer.text).toContain('Incorrect API key provided');
          expect(answer.text).toContain('***');
        }
      });
    }
  }

  for (const client of CLIENTS.filter((c) => c.name !== 'gemini')) {
    it(`${client.name}: an in-stream error event is masked too`, async () => {
      upstream.inStream = true;
      try {
        for (const [form, quote] of Object.entries(QUOTES)) {
          upstream.message = () => quote(KEY);
          const answer = await call(client, true);
          expect(answer.status).toBe(200);
          expect(leaks(answer.text), `${form}: ${answer.text}`).toEqual([]);
          expect(answer.text).toContain('Incorrect API key provided');
        }
      } finally {
        upstream.inStream = false;
      }
    });
  }

  it('masks an error answered with a 200, and an upstream token count refused', async () => {
    upstream.message = () => QUOTES.whole!(KEY);
    upstream.errorWith200 = true;
    try {
      const answer = await call(CLIENTS[0]!, false);
      expect(leaks(answer.text), answer.text).toEqual([]);
      expect(answer.text).toContain('Incorrect API key provided: ***');
    } finally {
      upstream.errorWith200 = false;
    }
    const counted = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await counted.text();
    expect(counted.status, text).toBe(401);
    expect(leaks(text), text).toEqual([]);
    expect(text).toContain('Incorrect API key provided: ***');
  });

  it("masks a header override's credential and the gateway's secret options", async () => {
    upstream.message = () => `rejected: org ${ORG_SECRET}, merchant key ${EPAY_SECRET}, key ${KEY}`;
    const answer = await call(CLIENTS[0]!, false);
    expect(leaks(answer.text), answer.text).toEqual([]);
    expect(answer.text).toContain('rejected: org ***, merchant key ***, key ***');
  });

  it('keeps the error logs the user and the administrator read free of the key, with the message', async () => {
    const mine = await eventually(
      async () => (await user.get('/api/log/self?p=1&page_size=100&type=5')).body,
      (body: any) => (body.data?.items?.length ?? 0) >= 10,
      10_000,
    );
    const items = mine.data.items as Array<{ content: string }>;
    expect(items.length).toBeGreaterThanOrEqual(10);
    expect(leaks(JSON.stringify(mine))).toEqual([]);
    expect(items.some((item) => item.content.includes('Incorrect API key provided: ***'))).toBe(true);
    const all = (await root.get('/api/log/?p=1&page_size=100&type=5')).body;
    expect(all.data.items.length).toBeGreaterThanOrEqual(10);
    expect(leaks(JSON.stringify(all))).toEqual([]);
  });

  it('masks the channel test result the console shows', async () => {
    upstream.message = () => QUOTES.truncated!(KEY);
    const tested = await root.get(`/api/channel/test/${channelIds.openai}`);
    expect(tested.body.success).toBe(false);
    expect(tested.body.message).toContain('Incorrect API key provided');
    expect(leaks(JSON.stringify(tested.body))).toEqual([]);
  });

  it('masks a realtime handshake refusal in the error event', async () => {
    const events: Array<{ type: string; error?: { message: string } }> = [];
    const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${key}` },
    });
    socket.on('message', (data: Buffer) => events.push(JSON.parse(String(data))));
    socket.on('error', () => {});
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    expect(await closed).toBe(1011);
    expect(events).toHaveLength(1);
    expect(events[0]?.type).toBe('error');
    expect(events[0]?.error?.message).toContain('Incorrect API key provided: ***');
    expect(leaks(JSON.stringify(events))).toEqual([]);
  });

  it("masks a task's failure reason in what the client fetches and the task list shows", async () => {
    suno.behaviour.failNext = true;
    suno.behaviour.failReason = `account locked for key ${KEY.slice(0, 20)}... (${encodeURIComponent(KEY)})`;
    const submitted = await fetch(`${gateway.url}/suno/submit/music`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'la la', tags: 'pop', title: 'Song', mv: 'chirp-v3-5' }),
    });
    const submission = (await submitted.json()) as { code: string; data: string };
    expect(submission.code, JSON.stringify(submission)).toBe('success');
    const fetched = await eventually(
      async () =>
        (await (
          await fetch(`${gateway.url}/suno/fetch/${submission.data}`, { headers: { authorization: `Bearer ${key}` } })
        ).json()) as { data?: { status?: string; fail_reason?: string } },
      (body) => body.data?.status === 'FAILURE',
      20_000,
    );
    expect(fetched.data?.status).toBe('FAILURE');
    expect(fetched.data?.fail_reason).toContain('account locked for key ***');
    expect(leaks(JSON.stringify(fetched))).toEqual([]);
    const listed = (await user.get('/api/task/self?p=1&page_size=10')).body;
    expect(JSON.stringify(listed)).toContain('account locked for key ***');
    expect(leaks(JSON.stringify(listed))).toEqual([]);
  });
});

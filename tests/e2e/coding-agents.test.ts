import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type CliResult, runClaudeCode, runCodex } from '../support/agent-cli.ts';
import type { AgentScript } from '../support/agent-script.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type ProxiedCall, type RecordingProxy, startRecordingProxy } from '../support/recording-proxy.ts';
import { eventually } from '../support/wait.ts';

// Claude Code (@anthropic-ai/claude-code) and the Codex CLI (@openai/codex), installed from npm, each run
// one headless turn through Tollgate against a mock upstream: the mock asks for the CLI's shell tool, the
// CLI runs the command, the mock answers only once the tool result holds the command's output. Each CLI
// runs on a channel of its own protocol and on one Tollgate converts to. Every upstream call reports a
// fixed usage, so every consume log must hold the quota the formula of reference §5.4 gives for it.

const CLAUDE_MODEL = 'claude-sonnet-4-20250514';
const GPT_MODEL = 'gpt-5-codex';
const GROUP_RATIO = 0.8;
const PRICES = {
  [CLAUDE_MODEL]: { model: 1.5, completion: 5, cache: 0.1, cacheWrite: 1.25 },
  [GPT_MODEL]: { model: 0.625, completion: 8, cache: 0.1, cacheWrite: 1.25 },
};
/** What each mock reports for every call: Anthropic's input excludes cache reads and writes, OpenAI's includes them. */
const ANTHROPIC_USAGE = {
  input_tokens: 120,
  cache_read_input_tokens: 3000,
  cache_creation_5m_input_tokens: 400,
  output_tokens: 60,
};
const OPENAI_USAGE = { prompt_tokens: 4000, cached_tokens: 3000, completion_tokens: 80 };

/** The quota one upstream call costs, by the formula, for the model whose channel answered it. */
function quotaOf(model: keyof typeof PRICES, upstream: 'anthropic' | 'openai'): number {
  const p = PRICES[model];
  const tokens =
    upstream === 'anthropic'
      ? ANTHROPIC_USAGE.input_tokens +
        ANTHROPIC_USAGE.cache_read_input_tokens * p.cache +
        ANTHROPIC_USAGE.cache_creation_5m_input_tokens * p.cacheWrite +
        ANTHROPIC_USAGE.output_tokens * p.completion
      : OPENAI_USAGE.prompt_tokens -
        OPENAI_USAGE.cached_tokens +
        OPENAI_USAGE.cached_tokens * p.cache +
        OPENAI_USAGE.completion_tokens * p.completion;
  return Math.round(tokens * p.model * GROUP_RATIO);
}

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let anthropic: MockAnthropic;
let openai: MockOpenAI;
let scratch: string;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startMockAnthropic(), startMockOpenAI()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  for (const [type, url, model] of [
    [14, anthropic.url, CLAUDE_MODEL],
    [1, openai.url, GPT_MODEL],
  ] as const) {
    const created = await root.post('/api/channel/', {
      name: `agents-${type}`,
      type,
      key: 'sk-upstream',
      base_url: url,
      models: model,
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  const byModel = (pick: (p: (typeof PRICES)[keyof typeof PRICES]) => number) =>
    JSON.stringify(Object.fromEntries(Object.entries(PRICES).map(([model, p]) => [model, pick(p)])));
  await gateway.options.setMany({
    GroupRatio: JSON.stringify({ default: GROUP_RATIO }),
    ModelRatio: byModel((p) => p.model),
    CompletionRatio: byModel((p) => p.completion),
    CacheRatio: byModel((p) => p.cache),
    CreateCacheRatio: byModel((p) => p.cacheWrite),
  });
  // The routing index learns of the new channels over the bus.
  const probe = await newKey('probe');
  const models = async () => {
    const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${probe}` } });
    return ((await answer.json()) as { data?: unknown[] }).data?.length ?? 0;
  };
  expect(await eventually(models, (n) => n === 2, 2000)).toBe(2);
  scratch = mkdtempSync(path.join(tmpdir(), 'tollgate-agents-'));
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([anthropic?.close(), openai?.close()]);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A new unlimited key, `sk-` included (the API answers keys with or without it). */
async function newKey(name: string): Promise<string> {
  const created = await root.post('/api/token/', { name, unlimited_quota: true });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  const key = String(created.body.data.key);
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

interface Turn {
  /** The CLI's exit, output and final text. */
  result: CliResult;
  finalText: string;
  script: AgentScript;
  /** What the CLI sent to Tollgate. */
  calls: ProxiedCall[];
  /** What Tollgate sent to the upstream, this run only. */
  upstream: Array<{ path: string; headers: Record<string, unknown>; body: any }>;
  workdir: string;
  tokenName: string;
}

/**
 * One CLI run through a recording proxy in front of the gateway, with a key of its own: the mock of
 * `upstream` plays `tool` (the CLI's shell tool, with its input built from the command).
 */
async function agentTurn(options: {
  cli: 'claude-code' | 'codex';
  model: string;
  upstream: 'anthropic' | 'openai';
  tool: string;
  input: (command: string) => Record<string, unknown>;
}): Promise<Turn> {
  const tokenName = `${options.cli}-${options.upstream}`;
  const apiKey = await newKey(tokenName);

  const nonce = randomBytes(6).toString('hex');
  // The command's output (the nonce reversed) appears nowhere in the command, so only running it yields it.
  const command = `echo ${nonce} | rev | tee proof.txt`;
  const script: AgentScript = {
    tool: options.tool,
    input: options.input(command),
    expect: [...nonce].reverse().join(''),
    answer: `Done: the command printed the reversed nonce (${nonce}).`,
    results: [],
  };
  const mock = options.upstream === 'anthropic' ? anthropic : openai;
  mock.behaviour =
    options.upstream === 'anthropic'
      ? { agent: script, usage: ANTHROPIC_USAGE }
      : { agent: script, usage: OPENAI_USAGE };
  const seen = mock.requests.length;

  const workdir = mkdtempSync(path.join(scratch, `${tokenName}-work-`));
  const home = mkdtempSync(path.join(scratch, `${tokenName}-home-`));
  const proxy: RecordingProxy = await startRecordingProxy(gateway.url);
  try {
    const cliInput = { baseUrl: proxy.url, apiKey, model: options.model, prompt: 'Run the command.', workdir, home };
    let result: CliResult;
    let finalText: string;
    if (options.cli === 'claude-code') {
      result = await runClaudeCode(cliInput);
      finalText = parseJson(result.stdout)?.result ?? '';
    } else {
      const codex = await runCodex(cliInput);
      result = codex;
      finalText = codex.lastMessage;
    }
    const upstream = mock.requests.slice(seen).map((r) => ({ path: r.path, headers: r.headers, body: r.body }));
    return { result, finalText, script, calls: proxy.calls, upstream, workdir, tokenName };
  } finally {
    await proxy.close();
  }
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The CLI exited 0, its tool really ran, and its final answer arrived. */
function expectCompletedTurn(turn: Turn): void {
  const context = `stdout: ${turn.result.stdout.slice(-2000)}\nstderr: ${turn.result.stderr.slice(-2000)}`;
  expect(turn.result.code, context).toBe(0);
  expect(readFileSync(path.join(turn.workdir, 'proof.txt'), 'utf8').trim()).toBe(turn.script.expect);
  expect(turn.script.results.some((result) => result.includes(turn.script.expect))).toBe(true);
  expect(turn.finalText).toContain(turn.script.answer);
  // Every call the CLI made was answered: no endpoint it needs is missing.
  expect(turn.calls.map((call) => `${call.method} ${call.path.split('?')[0]} ${call.status}`)).toEqual(
    turn.calls.map((call) => `${call.method} ${call.path.split('?')[0]} 200`),
  );
}

/** One consume log per upstream call of the run, each billed the formula's quota to the unit. */
async function expectBilled(turn: Turn, model: keyof typeof PRICES, upstream: 'anthropic' | 'openai') {
  const modelCalls = turn.upstream.filter((r) => r.path !== '/v1/messages/count_tokens');
  expect(modelCalls.length).toBeGreaterThanOrEqual(2);
  const logs = () =>
    gateway.store.db
      .selectFrom('logs')
      .select(['quota', 'model_name', 'prompt_tokens', 'completion_tokens', 'other'])
      .where('type', '=', 2)
      .where('token_name', '=', turn.tokenName)
      .orderBy('id', 'asc')
      .execute();
  await expect.poll(async () => (await logs()).length).toBe(modelCalls.length);
  const quota = quotaOf(model, upstream);
  for (const log of await logs()) {
    expect(log.model_name).toBe(model);
    expect(log.quota).toBe(quota);
  }
  return logs();
}

const claudeBash = (command: string) => ({ command, description: 'Print the reversed nonce into proof.txt' });
const codexExec = (command: string) => ({ cmd: command });
const TIMEOUT = 240_000;

describe('coding agents run headless through Tollgate', () => {
  it(
    'Claude Code on an Anthropic channel: the tool runs, cache_control and thinking reach the upstream unchanged',
    async () => {
      const turn = await agentTurn({
        cli: 'claude-code',
        model: CLAUDE_MODEL,
        upstream: 'anthropic',
        tool: 'Bash',
        input: claudeBash,
      });
      expectCompletedTurn(turn);
      const sent = turn.calls.filter((call) => call.path.split('?')[0] === '/v1/messages');
      const received = turn.upstream.filter((r) => r.path === '/v1/messages');
      expect(received.length).toBe(sent.length);
      const hints = JSON.stringify(sent.map((call) => [call.body.system, call.body.messages]));
      expect(hints).toContain('"cache_control"');
      expect(sent[0]?.body.thinking?.type).toBeDefined();
      for (const [index, call] of sent.entries()) {
        const upstream = received[index]!;
        for (const field of [
          'system',
          'messages',
          'tools',
          'thinking',
          'metadata',
          'context_management',
          'max_tokens',
        ]) {
          expect(upstream.body[field], field).toEqual(call.body[field]);
        }
        expect(upstream.headers['anthropic-beta']).toBe(call.headers['anthropic-beta']);
      }
      const logs = await expectBilled(turn, CLAUDE_MODEL, 'anthropic');
      expect(JSON.parse(logs[0]!.other)).toMatchObject({ cache_tokens: 3000, cache_creation_tokens: 400 });
    },
    TIMEOUT,
  );

  it(
    'Claude Code on an OpenAI channel: the Messages turn is converted both ways and billed',
    async () => {
      const turn = await agentTurn({
        cli: 'claude-code',
        model: GPT_MODEL,
        upstream: 'openai',
        tool: 'Bash',
        input: claudeBash,
      });
      expectCompletedTurn(turn);
      expect(turn.upstream.every((r) => r.path === '/v1/chat/completions')).toBe(true);
      const logs = await expectBilled(turn, GPT_MODEL, 'openai');
      expect(JSON.parse(logs[0]!.other).request_conversion).toEqual(['Claude Messages', 'OpenAI Compatible']);
    },
    TIMEOUT,
  );

  it(
    'Codex on an OpenAI Responses channel: the tool runs, prompt_cache_key and reasoning reach the upstream unchanged',
    async () => {
      const turn = await agentTurn({
        cli: 'codex',
        model: GPT_MODEL,
        upstream: 'openai',
        tool: 'exec_command',
        input: codexExec,
      });
      expectCompletedTurn(turn);
      const sent = turn.calls.filter((call) => call.path.split('?')[0] === '/v1/responses');
      const received = turn.upstream.filter((r) => r.path === '/v1/responses');
      expect(received.length).toBe(sent.length);
      for (const [index, call] of sent.entries()) {
        expect(call.body.prompt_cache_key).toEqual(expect.any(String));
        const upstream = received[index]!;
        for (const field of ['input', 'tools', 'prompt_cache_key', 'reasoning', 'include', 'store', 'instructions']) {
          expect(upstream.body[field], field).toEqual(call.body[field]);
        }
      }
      const logs = await expectBilled(turn, GPT_MODEL, 'openai');
      expect(JSON.parse(logs[0]!.other)).toMatchObject({ cache_tokens: 3000 });
    },
    TIMEOUT,
  );

  it(
    'Codex on an Anthropic channel: the Responses turn is converted both ways and billed',
    async () => {
      const turn = await agentTurn({
        cli: 'codex',
        model: CLAUDE_MODEL,
        upstream: 'anthropic',
        tool: 'exec_command',
        input: codexExec,
      });
      expectCompletedTurn(turn);
      expect(turn.upstream.every((r) => r.path === '/v1/messages')).toBe(true);
      // Codex's reasoning effort became Claude thinking; the signed thinking came back to Codex as encrypted
      // reasoning, and went up again with the tool result (the mock refuses a tool loop that lost it).
      expect(turn.upstream[0]?.body.thinking).toMatchObject({ type: 'enabled' });
      const second = turn.calls.filter((call) => call.path === '/v1/responses')[1];
      expect(second?.body.input).toContainEqual(
        expect.objectContaining({ type: 'reasoning', encrypted_content: 'sig_mock_thinking' }),
      );
      expect(turn.upstream[1]?.body.messages).toContainEqual(
        expect.objectContaining({
          role: 'assistant',
          content: expect.arrayContaining([
            expect.objectContaining({ type: 'thinking', signature: 'sig_mock_thinking' }),
          ]),
        }),
      );
      const logs = await expectBilled(turn, CLAUDE_MODEL, 'anthropic');
      expect(JSON.parse(logs[0]!.other).request_conversion).toEqual([
        'OpenAI Responses',
        'OpenAI Compatible',
        'Claude Messages',
      ]);
    },
    TIMEOUT,
  );
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { OPTION_DEFINITIONS, type OptionsService } from '../../domain/options/index.ts';
import { AppError } from '../../errors.ts';
import { providerAnswer } from '../protocols/answer.ts';
import { sendUpstream } from '../protocols/index.ts';
import { fakeTransport, testChannel } from '../protocols/test-support.ts';
import type { ChannelSnapshot } from '../types.ts';
import { type AttemptRequest, prepareUpstream, upstreamTarget } from './prepare.ts';

/** The options service's getters over the defined defaults (JSON ones parsed once, as the service does). */
const options = (() => {
  const all = new Map<string, string>(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
  const get = (key: string) => all.get(key) ?? '';
  const json = new Map<string, unknown>();
  for (const { key, default: value } of OPTION_DEFINITIONS) {
    try {
      json.set(key, JSON.parse(value || 'null'));
    } catch {
      // Not a JSON option.
    }
  }
  return {
    get,
    getBoolean: (key: string) => get(key) === 'true',
    getNumber: (key: string) => Number(get(key)),
    getJson: (key: string) => json.get(key) ?? null,
  } as unknown as OptionsService;
})();

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

function prepare(channel: ChannelSnapshot, fields: Partial<AttemptRequest> = {}) {
  const input: AttemptRequest = {
    channel,
    key: channel.keys[0] ?? '',
    format: 'openai-chat',
    body: chat,
    model: 'gpt-4o',
    stream: false,
    options,
    clientHeaders: {},
    requestPath: '/v1/chat/completions',
    retryIndex: 0,
    ...fields,
  };
  return prepareUpstream(upstreamTarget(channel, input.format, input.model, options), input);
}

const bodyOf = (prepared: ReturnType<typeof prepare>) => JSON.parse(String(prepared.request.body));

/** Counts the JSON.stringify and JSON.parse calls from now on (until the mocks are restored after the test). */
function countJsonCalls(): () => { stringify: number; parse: number } {
  const stringify = vi.spyOn(JSON, 'stringify');
  const parse = vi.spyOn(JSON, 'parse');
  return () => ({ stringify: stringify.mock.calls.length, parse: parse.mock.calls.length });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('prepareUpstream', () => {
  it('maps the model, applies param and header overrides, and keeps the client model for the answer', () => {
    const channel = testChannel({
      baseUrl: 'https://upstream.test',
      keys: ['sk-1'],
      modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' },
      paramOverride: {
        temperature: 0.5,
        operations: [{ mode: 'set_header', path: 'X-Param', value: 'p' }],
      },
      headerOverride: { 'X-Key': 'key-{api_key}' },
    });
    const prepared = prepare(channel);
    expect(prepared.upstreamFormat).toBe('openai-chat');
    expect(prepared.upstreamModel).toBe('gpt-4o-2024-08-06');
    expect(prepared.convert).toEqual({ model: 'gpt-4o', upstreamModel: 'gpt-4o-2024-08-06', stream: false });
    expect(bodyOf(prepared)).toMatchObject({ model: 'gpt-4o-2024-08-06', temperature: 0.5 });
    // set_header starts from the channel's header_override, and replaces it for this attempt.
    expect(prepared.request.headers).toMatchObject({ 'x-param': 'p', 'x-key': 'key-sk-1' });
  });

  it('asks a streaming OpenAI upstream for usage, and lets conditions tell a test and a retry apart', () => {
    const flag = (path: string, value: unknown) => ({
      mode: 'set',
      path: `seen.${path}`,
      value: true,
      conditions: [{ path, mode: 'full', value }],
    });
    const channel = testChannel({
      paramOverride: { operations: [flag('is_channel_test', true), flag('is_retry', true)] },
    });
    expect(bodyOf(prepare(channel, { stream: true, channelTest: true }))).toMatchObject({
      stream_options: { include_usage: true },
      seen: { is_channel_test: true },
    });
    expect(bodyOf(prepare(channel, { retryIndex: 1 })).seen).toEqual({ is_retry: true });
  });

  it('converts to the format the channel speaks', () => {
    const prepared = prepare(testChannel({ type: 14, baseUrl: 'https://anthropic.test', keys: ['sk-ant'] }), {
      model: 'claude-sonnet-4',
      body: { ...chat, model: 'claude-sonnet-4' },
    });
    expect(prepared.upstreamFormat).toBe('claude-messages');
    expect(bodyOf(prepared)).toMatchObject({ model: 'claude-sonnet-4', messages: [{ role: 'user' }] });
  });

  it("serialises the client's body once, trimmed to a strict upstream's fields after the param override", () => {
    const channel = testChannel({ type: 42, paramOverride: { user: 'added', temperature: 0.3 } });
    const calls = countJsonCalls();
    const prepared = prepare(channel, { model: 'mistral-small-latest', body: { ...chat, seed: 7 } });
    expect(calls()).toEqual({ stringify: 1, parse: 0 });
    expect(bodyOf(prepared)).toEqual({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'hi' }],
      random_seed: 7,
      temperature: 0.3,
    });
  });

  it('builds a Gemini batch of embeddings for batchEmbedContents from the object, serialising it once', () => {
    const calls = countJsonCalls();
    const prepared = prepare(testChannel({ type: 24, keys: ['AIza'] }), {
      format: 'openai-embeddings',
      model: 'gemini-embedding-001',
      body: { model: 'gemini-embedding-001', input: ['a', 'b'] },
    });
    expect(calls()).toEqual({ stringify: 1, parse: 0 });
    expect(prepared.request.url).toMatch(/models\/gemini-embedding-001:batchEmbedContents$/);
    expect(bodyOf(prepared).requests).toHaveLength(2);
  });

  it('puts a Coze conversation in the query string, not the body, serialising the body once', () => {
    const calls = countJsonCalls();
    const prepared = prepare(testChannel({ type: 49, keys: ['pat_x'] }), {
      model: '7499',
      body: { ...chat, model: '7499', conversation_id: 'v 1' },
    });
    expect(calls()).toEqual({ stringify: 1, parse: 0 });
    expect(prepared.request.url).toBe('https://api.coze.cn/v3/chat?conversation_id=v%201');
    expect(bodyOf(prepared)).not.toHaveProperty('conversation_id');
    expect(bodyOf(prepared)).toMatchObject({ bot_id: '7499' });
  });

  it("puts the key's app id in a Xunfei frame (over the param_override's), serialising it once", () => {
    const channel = testChannel({
      type: 18,
      keys: ['app1|secret|key'],
      other: 'v3.5',
      paramOverride: { header: { uid: 'u', app_id: 'not-the-key' } },
    });
    const calls = countJsonCalls();
    const prepared = prepare(channel, { model: 'SparkDesk', body: { ...chat, model: 'SparkDesk' } });
    expect(calls()).toEqual({ stringify: 1, parse: 0 });
    expect(bodyOf(prepared)).toMatchObject({
      header: { uid: 'u', app_id: 'app1' },
      parameter: { chat: { domain: 'generalv3.5' } },
    });
  });

  it("reads a Dify agent app's stream into the whole answer a client asked for, the body serialised once", async () => {
    const calls = countJsonCalls();
    let callsWhenSent: ReturnType<typeof calls> | undefined;
    const { transport, sent } = fakeTransport(() => {
      callsWhenSent = calls();
      const event = 'data: {"event":"agent_message","message_id":"m1","answer":"hello"}\n\n';
      return providerAnswer(200, 'text/event-stream', Buffer.from(event));
    });
    const channel = testChannel({ type: 37, other: 'agent', keys: ['app-key'] });
    const prepared = prepare(channel);
    const answer = await sendUpstream(prepared.provider, prepared.request, {
      channel,
      key: 'app-key',
      transport,
      signal: new AbortController().signal,
      stream: false,
    });
    expect(callsWhenSent).toEqual({ stringify: 1, parse: 0 });
    expect(JSON.parse(String(sent[0]?.body))).toMatchObject({ response_mode: 'streaming' });
    expect(await answer.body.json()).toMatchObject({ answer: 'hello', id: 'm1' });
  });

  it('sends a multipart form with the mapped model', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob(['RIFF']), 'a.wav');
    const channel = testChannel({ modelMapping: { 'whisper-1': 'whisper-large' } });
    const prepared = prepare(channel, { format: 'openai-audio-transcriptions', model: 'whisper-1', body: form });
    const sent = prepared.request.body as unknown as Iterable<[string, unknown]>;
    expect(Object.fromEntries([...sent].filter(([name]) => name === 'model'))).toEqual({ model: 'whisper-large' });
  });

  it('refuses what the channel cannot serve, and settings it cannot apply', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error instanceof AppError ? error.code : error;
      }
      return undefined;
    };
    expect(refusal(() => prepare(testChannel({ type: 14 }), { format: 'openai-embeddings' }))).toBe(
      'format_unsupported',
    );
    expect(refusal(() => prepare(testChannel({ modelMapping: { 'gpt-4o': 'a', a: 'gpt-4o' } })))).toBe(
      'channel:model_mapped_error',
    );
    expect(refusal(() => prepare(testChannel({ paramOverride: { operations: [{ mode: 'explode' }] } })))).toBe(
      'channel:param_override_invalid',
    );
    expect(refusal(() => prepare(testChannel({ headerOverride: { 'X-A': '{client_header:x} tail' } })))).toBe(
      'channel:header_override_invalid',
    );
  });
});

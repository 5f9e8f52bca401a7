import { describe, expect, it, vi } from 'vitest';
import { OPTION_DEFINITIONS, type OptionsService } from '../../domain/options/index.ts';
import { AppError } from '../../errors.ts';
import { testChannel } from '../protocols/test-support.ts';
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
    const stringify = vi.spyOn(JSON, 'stringify');
    const parse = vi.spyOn(JSON, 'parse');
    const prepared = prepare(channel, { model: 'mistral-small-latest', body: { ...chat, seed: 7 } });
    const calls = { stringify: stringify.mock.calls.length, parse: parse.mock.calls.length };
    vi.restoreAllMocks();
    expect(calls).toEqual({ stringify: 1, parse: 0 });
    expect(bodyOf(prepared)).toEqual({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'hi' }],
      random_seed: 7,
      temperature: 0.3,
    });
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

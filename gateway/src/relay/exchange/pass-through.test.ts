import { describe, expect, it } from 'vitest';
import type { OptionsService } from '../../domain/options/index.ts';
import { testChannel } from '../protocols/test-support.ts';
import type { ChannelSnapshot } from '../types.ts';
import { mayPassThrough, passThroughBody } from './pass-through.ts';
import { type AttemptRequest, upstreamTarget } from './prepare.ts';

const optionsWith = (global: boolean) =>
  ({
    getBoolean: (key: string) => key === 'global.pass_through_request_enabled' && global,
    getNumber: () => 0,
    get: () => '',
    getJson: () => null,
  }) as unknown as OptionsService;

const switched = (partial: Partial<ChannelSnapshot> = {}) =>
  testChannel({ setting: { pass_through_body_enabled: true }, models: ['m'], ...partial });
const tier = (...channels: ChannelSnapshot[]) => [{ priority: 0, channels }];
const RAW = Buffer.from('{"model":"m",  "messages":[]}');

function bodyFor(channel: ChannelSnapshot, format: AttemptRequest['format'], options = optionsWith(false)) {
  const input: AttemptRequest = {
    channel,
    key: 'k',
    format,
    body: { model: 'm', messages: [] },
    rawBody: RAW,
    model: 'm',
    stream: false,
    options,
    clientHeaders: {},
    requestPath: '/v1/chat/completions',
    retryIndex: 0,
  };
  return passThroughBody(upstreamTarget(channel, format, 'm', options), input);
}

describe('mayPassThrough: whether a request keeps its bytes', () => {
  it('everywhere with the global switch; else when a candidate channel, or the pinned one, has the setting', () => {
    const plain = testChannel({ id: 2 });
    expect(mayPassThrough(optionsWith(true), tier(plain), undefined)).toBe(true);
    expect(mayPassThrough(optionsWith(false), tier(plain), undefined)).toBe(false);
    expect(mayPassThrough(optionsWith(false), [...tier(plain), ...tier(switched())], undefined)).toBe(true);
    expect(mayPassThrough(optionsWith(false), tier(switched()), plain)).toBe(false);
    expect(mayPassThrough(optionsWith(false), [], switched())).toBe(true);
  });
});

describe('passThroughBody: the client bytes only where the upstream reads them', () => {
  it('on an OpenAI, Anthropic or Gemini channel of the request format', () => {
    expect(bodyFor(switched(), 'openai-chat')).toBe(RAW);
    expect(bodyFor(switched({ type: 14 }), 'claude-messages')).toBe(RAW);
    expect(bodyFor(switched({ type: 24 }), 'gemini-generate')).toBe(RAW);
  });

  it('not when the request is converted, the protocol wraps the body, or the switch is off', () => {
    expect(bodyFor(switched({ type: 14 }), 'openai-chat')).toBeUndefined();
    expect(bodyFor(switched({ type: 33 }), 'claude-messages')).toBeUndefined();
    expect(bodyFor(testChannel({ models: ['m'] }), 'openai-chat')).toBeUndefined();
    expect(bodyFor(testChannel({ models: ['m'] }), 'openai-chat', optionsWith(true))).toBe(RAW);
  });
});

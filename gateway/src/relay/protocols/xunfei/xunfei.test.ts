import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { xunfeiChatAdapter } from './convert/index.ts';
import { xunfeiProvider } from './index.ts';
import { joinFrames } from './session.ts';
import { sparkSignedUrl } from './sign.ts';
import { sparkVersion } from './versions.ts';

const ctx = { model: 'SparkDesk-v3.5', upstreamModel: 'SparkDesk-v3.5', stream: true };

describe('Spark URL signing', () => {
  it("matches the worked example of Xunfei's authentication docs", () => {
    const url = sparkSignedUrl(
      'wss://spark-api.xf-yun.com/v1.1/chat',
      'addd2272b6d8b7c8abdd79531420ca3b',
      'MjlmNzkzNmZkMDQ2OTc0ZDdmNGE2ZTZi',
      new Date('Fri, 05 May 2023 10:43:39 GMT'),
    );
    const query = new URL(url).searchParams;
    expect(query.get('authorization')).toBe(
      'YXBpX2tleT0iYWRkZDIyNzJiNmQ4YjdjOGFiZGQ3OTUzMTQyMGNhM2IiLCBhbGdvcml0aG09ImhtYWMtc2hhMjU2IiwgaGVhZGVycz0iaG9zdCBkYXRlIHJlcXVlc3QtbGluZSIsIHNpZ25hdHVyZT0iejVnSGR1M3B4VlY0QURNeWs0Njd3T1dEUTlxNkJRelIzbmZNVGpjL0RhUT0i',
    );
    expect(query.get('date')).toBe('Fri, 05 May 2023 10:43:39 GMT');
    expect(query.get('host')).toBe('spark-api.xf-yun.com');
    expect(url.startsWith('wss://spark-api.xf-yun.com/v1.1/chat?')).toBe(true);
  });

  it('reads the version from other, else the model suffix, else v2.1; refuses an unknown one', () => {
    expect(sparkVersion('v3.5', 'anything')).toEqual({ version: 'v3.5', path: '/v3.5/chat', domain: 'generalv3.5' });
    expect(sparkVersion('', 'SparkDesk-v4.0')).toMatchObject({ path: '/v4.0/chat', domain: '4.0Ultra' });
    expect(sparkVersion('', 'spark')).toMatchObject({ version: 'v2.1', domain: 'generalv2' });
    expect(sparkVersion('pro-128k', 'x')).toMatchObject({ path: '/chat/pro-128k', domain: 'pro-128k' });
    expect(() => sparkVersion('v9.9', 'x')).toThrow(/Unknown Spark API version v9\.9/);
  });

  it("builds the ws URL from an http base, and the frame with the key's app id; refuses a short key", () => {
    const channel = { type: 18, baseUrl: 'https://spark.example/', other: 'max-32k' } as ChannelSnapshot;
    const built = xunfeiProvider.buildRequest({
      format: 'xunfei-chat',
      channel,
      key: 'app1|secret|key',
      upstreamModel: 'SparkDesk',
      body: '{"header":{"uid":"u","app_id":"app1"},"payload":{}}',
      stream: false,
      options: undefined as never,
      clientHeaders: {},
    });
    expect(built.url).toBe('wss://spark.example/chat/max-32k');
    expect(built.body).toBe('{"header":{"uid":"u","app_id":"app1"},"payload":{}}');
    const finish = (key: string) =>
      xunfeiProvider.finishBody?.('xunfei-chat', { header: { uid: 'u', app_id: 'x' }, payload: {} }, channel, key);
    expect(finish('app1|secret|key')).toEqual({ header: { uid: 'u', app_id: 'app1' }, payload: {} });
    let refused: unknown;
    try {
      finish('app1|secret');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).message).toContain('APPID|APISecret|APIKey');
  });
});

describe('Spark frames', () => {
  it('converts a hub request: roles Spark knows, functions, parameters', () => {
    const frame = xunfeiChatAdapter.requestFromHub(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'w', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: 'sunny' },
        ],
        temperature: 0.2,
        max_tokens: 64,
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
        user: 'alice',
      },
      ctx,
    );
    expect(frame).toEqual({
      header: { uid: 'alice' },
      parameter: { chat: { temperature: 0.2, max_tokens: 64 } },
      payload: {
        message: {
          text: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Weather?' },
            { role: 'assistant', content: 'Called w({})' },
            { role: 'user', content: 'Result of tool call c: sunny' },
          ],
        },
        functions: { text: [{ name: 'w', description: '', parameters: { type: 'object' } }] },
      },
    });
  });

  const frames = [
    {
      header: { code: 0, sid: 's1', status: 0 },
      payload: { choices: { status: 0, seq: 0, text: [{ role: 'assistant', content: '晴' }] } },
    },
    {
      header: { code: 0, sid: 's1', status: 1 },
      payload: { choices: { status: 1, seq: 1, text: [{ role: 'assistant', content: '天' }] } },
    },
    {
      header: { code: 0, sid: 's1', status: 2 },
      payload: {
        choices: { status: 2, seq: 2, text: [{ role: 'assistant', content: '。' }] },
        usage: { text: { question_tokens: 2, prompt_tokens: 6, completion_tokens: 3, total_tokens: 9 } },
      },
    },
  ];

  it('streams frames as hub chunks ending in a finish and the usage', () => {
    const convert = xunfeiChatAdapter.streamToHub(ctx);
    const observer = xunfeiProvider.streamObserver('xunfei-chat');
    const chunks = frames.flatMap((frame) => {
      const event = { data: JSON.stringify(frame) };
      observer.observe(event);
      return convert.push(event);
    });
    const parsed = chunks.map((e) => JSON.parse(e.data));
    expect(parsed.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('晴天。');
    expect(parsed[0].choices[0].delta.role).toBe('assistant');
    expect(parsed.at(-2).choices[0].finish_reason).toBe('stop');
    expect(parsed.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 6, completion_tokens: 3 } });
    expect([observer.text, observer.usage]).toEqual(['晴天。', { promptTokens: 6, completionTokens: 3 }]);
  });

  it('joins a whole answer, function call included', () => {
    const joined = joinFrames(frames);
    expect(joined.payload.choices.text).toEqual([{ role: 'assistant', content: '晴天。', index: 0 }]);
    expect(xunfeiProvider.usageFromBody('xunfei-chat', joined)).toEqual({ promptTokens: 6, completionTokens: 3 });
    const call = joinFrames([
      {
        header: { code: 0, sid: 's2', status: 2 },
        payload: {
          choices: {
            status: 2,
            seq: 0,
            text: [{ role: 'assistant', content: '', function_call: { name: 'w', arguments: '{"city":"Paris"}' } }],
          },
        },
      },
    ]);
    expect(xunfeiChatAdapter.responseToHub(call, ctx)).toMatchObject({
      choices: [
        {
          message: {
            tool_calls: [{ id: 'call_s2_0', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
  });

  it('maps error frames and upgrade refusals to clear errors', () => {
    expect(xunfeiProvider.parseError(400, '{"header":{"code":10013,"message":"audit failed","sid":"s"}}')).toEqual({
      status: 400,
      message: 'Spark 10013: audit failed',
      type: 'upstream_error',
      code: '10013',
    });
    expect(xunfeiProvider.parseError(401, '{"message":"HMAC signature does not match"}')).toMatchObject({
      message: 'Spark refused the connection: HMAC signature does not match',
    });
  });
});

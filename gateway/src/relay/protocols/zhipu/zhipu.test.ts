import { compactVerify, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { jsonAnswer } from '../answer.ts';
import type { UpstreamRequest } from '../types.ts';
import { zhipuChatAdapter } from './convert/chat.ts';
import { zhipuProvider } from './index.ts';
import { parseZhipuKey, signZhipuToken, ZhipuTokens } from './jwt.ts';
import { ZhipuStreamDecoder } from './stream.ts';

const secret = (text: string) => new TextEncoder().encode(text);
const ctx = { model: 'chatglm_turbo', upstreamModel: 'chatglm_turbo', stream: true };

describe('Zhipu keys and tokens', () => {
  it('parses id.secret and refuses anything else', () => {
    expect(parseZhipuKey('abc.def')).toEqual({ id: 'abc', secret: 'def' });
    for (const bad of ['abc', '.def', 'abc.', 'a.b.c', '']) expect(parseZhipuKey(bad), bad).toBeUndefined();
  });

  it('signs an HS256 token the jose package verifies, with Zhipu header and millisecond claims', async () => {
    const token = signZhipuToken({ id: 'kid', secret: 's3cret' }, 1_700_000_000_000, 60_000);
    const verified = await compactVerify(token, secret('s3cret'));
    await expect(compactVerify(token, secret('other'))).rejects.toThrow(/signature/);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', sign_type: 'SIGN' });
    expect(JSON.parse(Buffer.from(verified.payload).toString())).toEqual({
      api_key: 'kid',
      exp: 1_700_000_060_000,
      timestamp: 1_700_000_000_000,
    });
    // The same inputs give the same token (a fixed vector).
    expect(token).toBe(signZhipuToken({ id: 'kid', secret: 's3cret' }, 1_700_000_000_000, 60_000));
  });

  it('reuses a signed token until a minute before it expires', () => {
    let now = 1_000;
    const tokens = new ZhipuTokens(() => now);
    const key = { id: 'kid', secret: 's' };
    const first = tokens.get(key);
    now += 9 * 60_000 - 1;
    expect(tokens.get(key)).toBe(first);
    now += 2;
    expect(tokens.get(key)).not.toBe(first);
  });
});

describe('sending to Zhipu', () => {
  const channel = { id: 1, type: 16, baseUrl: '', other: '' } as ChannelSnapshot;
  const built = zhipuProvider.buildRequest({
    format: 'zhipu-v3',
    channel,
    key: 'kid.s',
    upstreamModel: 'chatglm_turbo',
    body: '{}',
    stream: true,
    options: undefined as never,
    clientHeaders: {},
  });

  it('builds the model-api path and signs with the raw token; success:false is an error', async () => {
    expect(built.url).toBe('https://open.bigmodel.cn/api/paas/v3/model-api/chatglm_turbo/sse-invoke');
    const sent: UpstreamRequest[] = [];
    const transport = {
      send: async (request: UpstreamRequest) => {
        sent.push(request);
        return jsonAnswer(200, { code: 1261, msg: 'Prompt 超长', success: false });
      },
    } as unknown as Transport;
    const answer = await zhipuProvider.send!(built, {
      channel,
      key: 'kid.s',
      transport,
      signal: new AbortController().signal,
      stream: true,
    });
    await compactVerify(sent[0]!.headers.authorization!, secret('s'));
    expect(answer.status).toBe(400);
    expect(zhipuProvider.parseError(400, await answer.body.text())).toEqual({
      status: 400,
      message: 'Prompt 超长',
      type: 'zhipu_error',
      code: '1261',
    });
    const malformed = await zhipuProvider.send!(built, {
      channel,
      key: 'no-dot',
      transport,
      signal: new AbortController().signal,
      stream: true,
    });
    expect(malformed.status).toBe(401);
    expect(sent).toHaveLength(1);
  });
});

describe('the sse-invoke stream', () => {
  const wire =
    'event:add\nid:1\ndata: 你好\n\nevent:add\nid:1\ndata:line one\ndata:line two\n\n' +
    'event:finish\nid:1\ndata:\nmeta:{"task_status":"SUCCESS","usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n';

  it('decodes raw text lines exactly, whatever the chunk boundaries, and the finish meta', () => {
    const bytes = Buffer.from(wire);
    for (const size of [1, 3, 13, bytes.length]) {
      const decoder = new ZhipuStreamDecoder();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...decoder.push(bytes.subarray(i, i + size)));
      events.push(...decoder.end());
      expect(events, `chunks of ${size}`).toEqual([
        { event: 'add', data: ' 你好' },
        { event: 'add', data: 'line one\nline two' },
        { event: 'finish', data: '' },
        {
          event: 'meta',
          data: '{"task_status":"SUCCESS","usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}',
        },
      ]);
    }
  });

  it('becomes hub chunks with the meta usage, and the observer counts the same', () => {
    const decoder = new ZhipuStreamDecoder();
    const events = [...decoder.push(Buffer.from(wire)), ...decoder.end()];
    const converter = zhipuChatAdapter.streamToHub(ctx);
    const observer = zhipuProvider.streamObserver('zhipu-v3');
    const chunks = events.flatMap((event) => {
      observer.observe(event);
      return converter.push(event);
    });
    const parsed = chunks.map((c) => JSON.parse(c.data));
    expect(parsed.map((c) => c.choices[0]?.delta?.content ?? null)).toEqual([
      ' 你好',
      'line one\nline two',
      null,
      null,
    ]);
    expect(parsed[2].choices[0].finish_reason).toBe('stop');
    expect(parsed[3].usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect([observer.text, observer.usage]).toEqual([
      ' 你好line one\nline two',
      { promptTokens: 7, completionTokens: 3 },
    ]);
    expect(JSON.parse(converter.push({ event: 'error', data: 'model overloaded' })[0]!.data)).toMatchObject({
      error: { message: 'model overloaded' },
    });
  });

  it('reads a whole answer: the quoted content unwrapped, usage from data', () => {
    const body = {
      code: 200,
      msg: '操作成功',
      success: true,
      data: {
        task_id: 't',
        choices: [{ role: 'assistant', content: '"a \\"b\\"\\nc"' }],
        usage: { prompt_tokens: 2, completion_tokens: 1 },
      },
    };
    expect(zhipuChatAdapter.responseToHub(body, ctx).choices[0].message.content).toBe('a "b"\nc');
    expect(zhipuProvider.usageFromBody('zhipu-v3', body)).toEqual({ promptTokens: 2, completionTokens: 1 });
  });
});

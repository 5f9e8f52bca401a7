import { describe, expect, it } from 'vitest';
import { SseParser } from '../../sse.ts';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { jsonAnswer } from '../answer.ts';
import type { UpstreamRequest } from '../types.ts';
import { baiduChatAdapter } from './convert/chat.ts';
import { chatPath, embeddingsPath } from './endpoints.ts';
import { parseBaiduError, statusForBaiduCode } from './errors.ts';
import { baiduProvider } from './index.ts';
import { parseBaiduKey } from './key.ts';
import { BaiduTokens } from './token.ts';

const ctx = { model: 'ERNIE-4.0-8K', upstreamModel: 'ERNIE-4.0-8K', stream: false };

/** A transport answering from a function, recording what was sent. */
function fakeTransport(answer: (request: UpstreamRequest) => ReturnType<typeof jsonAnswer>) {
  const sent: UpstreamRequest[] = [];
  const transport = {
    send: async (request: UpstreamRequest) => {
      sent.push(request);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return answer(request);
    },
  } as unknown as Transport;
  return { sent, transport };
}

const tokenAnswer = (token: string, expires = 2592000) => jsonAnswer(200, { access_token: token, expires_in: expires });

describe('Baidu keys and paths', () => {
  it('parses APIKey|SecretKey and refuses anything else', () => {
    expect(parseBaiduKey('ak|sk')).toEqual({ apiKey: 'ak', secretKey: 'sk' });
    expect(parseBaiduKey(' ak | sk ')).toEqual({ apiKey: 'ak', secretKey: 'sk' });
    for (const bad of ['ak', 'ak|', '|sk', 'a|b|c', '']) expect(parseBaiduKey(bad), bad).toBeUndefined();
  });

  it('maps public model names to their endpoints, and custom ones to themselves lower-cased', () => {
    const prefix = '/rpc/2.0/ai_custom/v1/wenxinworkshop';
    expect(chatPath('ERNIE-4.0-8K')).toBe(`${prefix}/chat/completions_pro`);
    expect(chatPath('ERNIE-3.5-8K')).toBe(`${prefix}/chat/completions`);
    expect(chatPath('ERNIE-Speed-8K')).toBe(`${prefix}/chat/ernie_speed`);
    expect(chatPath('ERNIE-Lite-8K')).toBe(`${prefix}/chat/ernie-lite-8k`);
    expect(chatPath('My-Deployment')).toBe(`${prefix}/chat/my-deployment`);
    expect(embeddingsPath('Embedding-V1')).toBe(`${prefix}/embeddings/embedding-v1`);
  });
});

describe('Baidu access tokens', () => {
  const key = { apiKey: 'ak', secretKey: 'sk' };

  it('fetches once for concurrent requests and reuses the token until shortly before expiry', async () => {
    let now = 0;
    const tokens = new BaiduTokens(() => now);
    let n = 0;
    const { sent, transport } = fakeTransport(() => tokenAnswer(`t${++n}`, 3600));
    const signal = new AbortController().signal;
    const both = await Promise.all([
      tokens.get('https://h', key, transport, signal),
      tokens.get('https://h', key, transport, signal),
    ]);
    expect(both).toEqual([{ token: 't1' }, { token: 't1' }]);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe('https://h/oauth/2.0/token?grant_type=client_credentials&client_id=ak&client_secret=sk');
    expect(sent[0]?.method).toBe('POST');
    now = 3600_000 - 10 * 60_000 - 1;
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({ token: 't1' });
    now += 2;
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({ token: 't2' });
  });

  it('lets one caller stop waiting without failing the fetch others share', async () => {
    const tokens = new BaiduTokens();
    const { sent, transport } = fakeTransport(() => tokenAnswer('shared'));
    const leaving = new AbortController();
    const first = tokens.get('https://h', key, transport, leaving.signal);
    const second = tokens.get('https://h', key, transport, new AbortController().signal);
    leaving.abort();
    await expect(first).rejects.toThrow(/abort/i);
    expect(await second).toEqual({ token: 'shared' });
    expect(sent).toHaveLength(1);
  });

  it('does not keep a refusal, and forgets a token Baidu called invalid', async () => {
    const tokens = new BaiduTokens();
    let refuse = true;
    let n = 0;
    const { transport } = fakeTransport(() =>
      refuse
        ? jsonAnswer(401, { error: 'invalid_client', error_description: 'unknown client id' })
        : tokenAnswer(`t${++n}`),
    );
    const signal = new AbortController().signal;
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({
      refused: { status: 401, text: '{"error":"invalid_client","error_description":"unknown client id"}' },
    });
    refuse = false;
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({ token: 't1' });
    tokens.forget('https://h', key, 'other');
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({ token: 't1' });
    tokens.forget('https://h', key, 't1');
    expect(await tokens.get('https://h', key, transport, signal)).toEqual({ token: 't2' });
  });
});

describe('sending to Baidu', () => {
  const channel = { id: 1, type: 15, baseUrl: 'https://aip.example', other: '' } as ChannelSnapshot;
  const request = {
    url: 'https://aip.example/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions',
    method: 'POST' as const,
    headers: {},
    body: '{}',
  };

  it('refetches the token once on error 111 and answers other HTTP-200 errors with their status', async () => {
    let n = 0;
    let apiCalls = 0;
    const { sent, transport } = fakeTransport((r) => {
      if (r.url.includes('/oauth/')) return tokenAnswer(`tok${++n}`);
      apiCalls++;
      if (r.url.endsWith('access_token=tok1'))
        return jsonAnswer(200, { error_code: 111, error_msg: 'Access token expired' });
      return apiCalls > 2
        ? jsonAnswer(200, { error_code: 18, error_msg: 'Open api qps request limit reached' })
        : jsonAnswer(200, { result: 'ok', usage: {} });
    });
    const input = { channel, key: 'ak2|sk2', transport, signal: new AbortController().signal, stream: false };
    const answer = await baiduProvider.send!(request, input);
    expect([answer.status, await answer.body.json()]).toEqual([200, { result: 'ok', usage: {} }]);
    expect(sent.map((r) => new URL(r.url).pathname)).toEqual([
      '/oauth/2.0/token',
      '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions',
      '/oauth/2.0/token',
      '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions',
    ]);
    const limited = await baiduProvider.send!(request, input);
    expect(limited.status).toBe(429);
    expect(baiduProvider.parseError(429, await limited.body.text())).toEqual({
      status: 429,
      message: 'Open api qps request limit reached',
      type: 'baidu_error',
      code: '18',
    });
  });

  it('refuses a malformed key and passes a token refusal on, both as 401s that say why', async () => {
    const { transport } = fakeTransport(() =>
      jsonAnswer(401, { error: 'invalid_client', error_description: 'Client authentication failed' }),
    );
    const input = { channel, key: 'no-separator', transport, signal: new AbortController().signal, stream: false };
    const malformed = await baiduProvider.send!(request, input);
    expect(malformed.status).toBe(401);
    expect(baiduProvider.parseError(401, await malformed.body.text()).message).toContain('APIKey|SecretKey');
    const refused = await baiduProvider.send!(request, { ...input, key: 'ak3|wrong' });
    expect(refused.status).toBe(401);
    expect(baiduProvider.parseError(401, await refused.body.text())).toMatchObject({
      message: "Baidu refused the channel's APIKey|SecretKey: Client authentication failed",
      code: 'invalid_client',
    });
  });

  it('maps error codes to statuses', () => {
    expect([110, 111, 4, 17, 336000, 336003].map(statusForBaiduCode)).toEqual([401, 401, 429, 429, 503, 400]);
    expect(parseBaiduError(502, 'bad gateway')).toMatchObject({ message: 'bad gateway', code: null });
  });
});

describe('ERNIE chat conversion', () => {
  it('takes the system prompt apart, merges consecutive turns and maps tools to functions', () => {
    const body = baiduChatAdapter.requestFromHub(
      {
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'a' },
          { role: 'user', content: [{ type: 'text', text: 'b' }] },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'r' },
        ],
        temperature: 1.5,
        top_p: 0.5,
        max_completion_tokens: 9,
        stop: 'x',
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        stream: true,
      },
      ctx,
    );
    expect(body).toEqual({
      messages: [
        { role: 'user', content: 'a\nb' },
        { role: 'assistant', content: '', function_call: { name: 'f', arguments: '{}' } },
        { role: 'function', name: 'f', content: 'r' },
      ],
      stream: true,
      system: 'sys',
      temperature: 1,
      top_p: 0.5,
      max_output_tokens: 9,
      stop: ['x'],
      functions: [{ name: 'f', description: '', parameters: { type: 'object' } }],
    });
  });

  it('reads whole answers: text, truncation and function calls', () => {
    const text = baiduChatAdapter.responseToHub(
      { id: 'as-1', result: 'hi', is_truncated: true, usage: { prompt_tokens: 3, completion_tokens: 1 } },
      ctx,
    );
    expect(text.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'hi' }, finish_reason: 'length' });
    expect(text.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    const call = baiduChatAdapter.responseToHub(
      { id: 'as-2', result: '', function_call: { name: 'f', arguments: '{"a":1}' } },
      ctx,
    );
    expect(call.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { tool_calls: [{ id: 'call_as-2', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    });
  });

  it('streams split at awkward places into hub chunks with the last event usage, and the observer agrees', () => {
    const wire = [
      { id: 'as-3', result: '你好', is_end: false, usage: { prompt_tokens: 5, completion_tokens: 1 } },
      { id: 'as-3', result: ', world', is_end: true, usage: { prompt_tokens: 5, completion_tokens: 4 } },
    ]
      .map((event) => `data: ${JSON.stringify(event)}\n\n`)
      .join('');
    const bytes = Buffer.from(wire);
    const parser = new SseParser();
    const events = [];
    for (let i = 0; i < bytes.length; i += 7) events.push(...parser.push(bytes.subarray(i, i + 7)));
    events.push(...parser.end());
    const observer = baiduProvider.streamObserver('baidu-chat');
    const converter = baiduChatAdapter.streamToHub({ ...ctx, stream: true });
    const chunks = events.flatMap((event) => {
      observer.observe(event);
      return converter.push(event);
    });
    const parsed = chunks.map((c) => JSON.parse(c.data));
    expect(parsed.map((c) => c.choices[0]?.delta?.content ?? null)).toEqual(['你好', ', world', null, null]);
    expect(parsed[2].choices[0].finish_reason).toBe('stop');
    expect(parsed[3]).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 4 } });
    expect([observer.text, observer.usage]).toEqual(['你好, world', { promptTokens: 5, completionTokens: 4 }]);
  });

  it('sends an HTTP-200 error inside a stream on as an error chunk', () => {
    const converter = baiduChatAdapter.streamToHub(ctx);
    const [event] = converter.push({ data: '{"error_code":336100,"error_msg":"try again later"}' });
    expect(JSON.parse(event!.data)).toEqual({
      error: { message: 'try again later', type: 'baidu_error', code: '336100' },
    });
  });
});

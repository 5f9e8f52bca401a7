import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors.ts';
import { SseParser } from '../../sse.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { tencentChatAdapter } from './convert/index.ts';
import { tencentProvider } from './index.ts';
import { tc3Authorization } from './sign.ts';

// Tencent's own signer (a CommonJS module the SDK does not export): the reference our TC3 code must match.
const Sign: typeof import('tencentcloud-sdk-nodejs-common/tencentcloud/common/sign.js').default = createRequire(
  import.meta.url,
)('tencentcloud-sdk-nodejs-common/tencentcloud/common/sign.js').default;

const ctx = { model: 'hunyuan-turbo', upstreamModel: 'hunyuan-turbo', stream: true };

describe('TC3-HMAC-SHA256 signing', () => {
  it("signs exactly as Tencent's own SDK does", () => {
    const payload = '{"Model":"hunyuan-lite","Messages":[{"Role":"user","Content":"你好"}],"Stream":false}';
    const timestamp = 1_732_600_000;
    const ours = tc3Authorization({
      secretId: 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE',
      secretKey: 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE',
      service: 'hunyuan',
      host: 'hunyuan.tencentcloudapi.com',
      contentType: 'application/json',
      payload,
      timestamp,
    });
    const sdk = Sign.sign3({
      method: 'POST',
      url: 'https://hunyuan.tencentcloudapi.com/',
      payload: JSON.parse(payload),
      timestamp,
      service: 'hunyuan',
      secretId: 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE',
      secretKey: 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE',
      multipart: false,
      boundary: '',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(ours).toBe(sdk);
    expect(ours).toMatch(
      /^TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE\/2024-11-26\/hunyuan\/tc3_request, SignedHeaders=content-type;host, Signature=[0-9a-f]{64}$/,
    );
  });

  it('signs the built request with the key parts, and refuses a key missing one', async () => {
    const channel = { type: 23, baseUrl: 'http://127.0.0.1:9000', other: '' } as ChannelSnapshot;
    const built = tencentProvider.buildRequest({
      format: 'tencent-chat',
      channel,
      key: '1300|AKIDx|secret',
      upstreamModel: 'hunyuan-lite',
      body: '{}',
      stream: false,
      options: undefined as never,
      clientHeaders: {},
    });
    expect(built).toMatchObject({
      url: 'http://127.0.0.1:9000/',
      headers: { 'x-tc-action': 'ChatCompletions', 'x-tc-version': '2023-09-01' },
    });
    const signed = await tencentProvider.authorize!(built, {
      channel,
      key: '1300|AKIDx|secret',
      transport: undefined as never,
    });
    expect(signed.headers.authorization).toContain('Credential=AKIDx/');
    expect(Number(signed.headers['x-tc-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);

    const refused = (() => {
      try {
        tencentProvider.buildRequest({
          ...{
            format: 'tencent-chat',
            channel,
            upstreamModel: 'x',
            body: '{}',
            stream: false,
            options: undefined as never,
            clientHeaders: {},
          },
          key: 'AKIDx|secret',
        });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'channel:key_malformed', status: 401 });
    expect((refused as AppError).message).toBe('The channel key of type 23 (Tencent) must be AppId|SecretId|SecretKey');
  });
});

describe('Hunyuan format', () => {
  it('converts a hub request with tools, tool results and a named tool choice', () => {
    const body = tencentChatAdapter.requestFromHub(
      {
        model: 'x',
        temperature: 0.3,
        top_p: 0.9,
        messages: [
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather ' },
              { type: 'text', text: 'in Paris?' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        ],
        tools: [{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'w' } },
      },
      { ...ctx, stream: false },
    );
    const tool = { Type: 'function', Function: { Name: 'w', Description: 'weather', Parameters: '{"type":"object"}' } };
    expect(body).toEqual({
      Model: 'hunyuan-turbo',
      Stream: false,
      Temperature: 0.3,
      TopP: 0.9,
      Messages: [
        { Role: 'system', Content: 'Be brief.' },
        { Role: 'user', Content: 'Weather in Paris?' },
        {
          Role: 'assistant',
          Content: '',
          ToolCalls: [{ Id: 'c1', Type: 'function', Function: { Name: 'w', Arguments: '{"city":"Paris"}' } }],
        },
        { Role: 'tool', Content: 'sunny', ToolCallId: 'c1' },
      ],
      Tools: [tool],
      ToolChoice: 'custom',
      CustomTool: tool,
    });
  });

  it('reads a whole answer: text, tool calls, finish reason and usage', () => {
    const answer = {
      Response: {
        Id: 'abc',
        Created: 1,
        Choices: [
          {
            Message: {
              Role: 'assistant',
              Content: '',
              ToolCalls: [{ Id: 'c9', Type: 'function', Index: 0, Function: { Name: 'w', Arguments: '{}' } }],
            },
            FinishReason: 'tool_calls',
          },
        ],
        Usage: { PromptTokens: 20, CompletionTokens: 4, TotalTokens: 24, PromptTokensDetails: { CachedTokens: 8 } },
        RequestId: 'r',
      },
    };
    expect(tencentChatAdapter.responseToHub(answer, ctx)).toMatchObject({
      id: 'chatcmpl-abc',
      choices: [
        {
          message: { tool_calls: [{ id: 'c9', function: { name: 'w', arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 8 } },
    });
    expect(tencentProvider.usageFromBody('tencent-chat', answer)).toEqual({
      promptTokens: 20,
      completionTokens: 4,
      cachedTokens: 8,
    });
  });

  it('streams: chunks split anywhere, usage once at the end, moderation as content_filter', () => {
    const event = (content: string, finish: string, completion: number) =>
      `data: ${JSON.stringify({ Id: 'i1', Created: 5, Choices: [{ Delta: { Role: 'assistant', Content: content }, FinishReason: finish }], Usage: { PromptTokens: 7, CompletionTokens: completion, TotalTokens: 7 + completion } })}\n\n`;
    const raw = Buffer.from(event('晴天', '', 1) + event('，24 度', '', 3) + event('', 'sensitive', 4));
    const parser = new SseParser();
    const observer = tencentProvider.streamObserver('tencent-chat');
    const convert = tencentChatAdapter.streamToHub(ctx);
    const out = [];
    // Three-byte slices cut through the UTF-8 characters and the `data:` prefixes.
    for (let at = 0; at < raw.length; at += 3) {
      for (const e of parser.push(raw.subarray(at, at + 3))) {
        observer.observe(e);
        out.push(...convert.push(e));
      }
    }
    for (const e of parser.end()) out.push(...convert.push(e));
    out.push(...convert.end());
    const chunks = out.map((e) => JSON.parse(e.data));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('晴天，24 度');
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['content_filter']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 4 } });
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
    expect([observer.text, observer.usage]).toEqual(['晴天，24 度', { promptTokens: 7, completionTokens: 4 }]);
  });

  it('passes an error inside the stream on as the hub error chunk', () => {
    const convert = tencentChatAdapter.streamToHub(ctx);
    const moderated = convert.push({ data: '{"Id":"i","ErrorMsg":{"Code":2001,"Msg":"内容审核不通过"},"Choices":[]}' });
    expect(moderated.map((e) => JSON.parse(e.data))).toEqual([
      { error: { message: '内容审核不通过', type: 'upstream_error', code: '2001' } },
    ]);
  });

  it('maps Tencent error codes to statuses and keeps the code', () => {
    const error = (code: string) =>
      JSON.stringify({ Response: { Error: { Code: code, Message: 'no' }, RequestId: 'r' } });
    expect(tencentProvider.parseError(401, error('AuthFailure.SignatureFailure'))).toEqual({
      status: 401,
      message: 'AuthFailure.SignatureFailure: no',
      type: 'upstream_error',
      code: 'AuthFailure.SignatureFailure',
    });
    expect(tencentProvider.parseError(502, 'bad gateway')).toMatchObject({ message: 'bad gateway', code: null });
  });
});

import { Agent } from 'node:http';
import { connect } from 'node:net';
import { hunyuan } from 'tencentcloud-sdk-nodejs-hunyuan';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockTencent, startMockTencent } from '../support/mock-tencent.ts';

// The Hunyuan mock is proven faithful by Tencent's own SDK: its TC3 signer is the reference the mock's
// check must accept, and a wrong secret must be refused the way Tencent refuses it.
let mock: MockTencent;
/** Sends the SDK's requests for hunyuan.tencentcloudapi.com to the mock, Host header and all unchanged. */
let toMock: Agent;

beforeAll(async () => {
  mock = await startMockTencent({ AKIDsdk: 'sdk-secret' });
  const port = Number(new URL(mock.url).port);
  toMock = new Agent();
  toMock.createConnection = () => connect(port, '127.0.0.1');
});

afterAll(async () => {
  toMock?.destroy();
  await mock?.close();
});

const client = (secretKey: string) =>
  new hunyuan.v20230901.Client({
    credential: { secretId: 'AKIDsdk', secretKey },
    region: '',
    // The SDK names the signing service after the endpoint's first label: the real host is kept.
    profile: { httpProfile: { endpoint: 'hunyuan.tencentcloudapi.com', protocol: 'http://', agent: toMock } },
  });

describe('the Hunyuan mock, as the official tencentcloud SDK sees it', () => {
  it('accepts the SDK-signed ChatCompletions call and answers it whole', async () => {
    mock.behaviour = { reply: 'SDK hello', usage: { PromptTokens: 3, CompletionTokens: 2 } };
    const answer = await client('sdk-secret').ChatCompletions({
      Model: 'hunyuan-lite',
      Messages: [{ Role: 'user', Content: 'hi' }],
    });
    expect(answer.Choices?.[0]?.Message?.Content).toBe('SDK hello');
    expect(answer.Usage).toMatchObject({ PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5 });
  });

  it('streams to the SDK as server-sent events', async () => {
    mock.behaviour = { reply: 'Streamed to the SDK', usage: { PromptTokens: 3, CompletionTokens: 4 } };
    const stream = (await client('sdk-secret').ChatCompletions({
      Model: 'hunyuan-lite',
      Messages: [{ Role: 'user', Content: 'hi' }],
      Stream: true,
    })) as unknown as AsyncIterable<{ data: string }>;
    let text = '';
    let usage: unknown;
    for await (const event of stream) {
      const chunk = JSON.parse(event.data);
      text += chunk.Choices[0].Delta.Content;
      usage = chunk.Usage;
    }
    expect(text).toBe('Streamed to the SDK');
    expect(usage).toMatchObject({ CompletionTokens: 4 });
  });

  it('refuses a wrong secret with AuthFailure.SignatureFailure', async () => {
    const error = await client('not-the-secret')
      .ChatCompletions({ Model: 'hunyuan-lite', Messages: [{ Role: 'user', Content: 'hi' }] })
      .catch((e: unknown) => e as { code?: string; message?: string });
    expect(error).toMatchObject({ code: 'AuthFailure.SignatureFailure' });
  });
});

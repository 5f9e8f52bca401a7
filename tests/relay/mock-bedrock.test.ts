import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import { BedrockClient, ListFoundationModelsCommand } from '@aws-sdk/client-bedrock';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockBedrock, SIGNATURE_MISMATCH, startMockBedrock } from '../support/mock-bedrock.ts';

// AWS's and Anthropic's own Bedrock clients, pointed at the mock: it answers what they send, in the
// shapes they parse, and refuses what Bedrock refuses. (The gateway's tests then trust the mock.)
let mock: MockBedrock;
const CLAUDE = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
const NOVA = 'amazon.nova-pro-v1:0';

beforeAll(async () => {
  mock = await startMockBedrock();
});
afterAll(() => mock?.close());

const aws = (secretAccessKey = mock.credentials.secretAccessKey) =>
  new BedrockRuntimeClient({
    endpoint: mock.url,
    region: 'us-west-2',
    credentials: { accessKeyId: mock.credentials.accessKeyId, secretAccessKey },
    maxAttempts: 1,
    // The SDK speaks HTTP/2 to Bedrock by default; the mock (like the gateway's transport) speaks HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
  });

const claudeBody = {
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hi' }],
};

describe('mock Bedrock, seen by @aws-sdk/client-bedrock-runtime', () => {
  it('answers InvokeModel with a Claude message, the signature checked over the encoded model id', async () => {
    mock.behaviour = { reply: 'Hello there.' };
    const answer = await aws().send(
      new InvokeModelCommand({ modelId: CLAUDE, contentType: 'application/json', body: JSON.stringify(claudeBody) }),
    );
    const message = JSON.parse(new TextDecoder().decode(answer.body));
    expect(message.content).toEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(mock.requests.at(-1)).toMatchObject({
      modelId: CLAUDE,
      operation: 'invoke',
      auth: 'sigv4',
      region: 'us-west-2',
    });
    expect(mock.requests.at(-1)?.path).toBe('/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke');
  });

  it('streams InvokeModelWithResponseStream as event-stream chunks of Claude events', async () => {
    mock.behaviour = { reply: 'One two three.' };
    const answer = await aws().send(
      new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, body: JSON.stringify(claudeBody) }),
    );
    const types: string[] = [];
    let text = '';
    for await (const event of answer.body ?? []) {
      const data = JSON.parse(new TextDecoder().decode(event.chunk?.bytes));
      types.push(data.type);
      if (data.delta?.type === 'text_delta') text += data.delta.text;
    }
    expect(text).toBe('One two three.');
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
  });

  it('answers Converse and ConverseStream', async () => {
    mock.behaviour = { reply: 'Nova says hi.', converseUsage: { inputTokens: 12, outputTokens: 4 } };
    const messages = [{ role: 'user' as const, content: [{ text: 'Hi' }] }];
    const whole = await aws().send(
      new ConverseCommand({ modelId: NOVA, messages, inferenceConfig: { maxTokens: 50 } }),
    );
    expect(whole.output?.message?.content?.[0]?.text).toBe('Nova says hi.');
    expect(whole.usage).toMatchObject({ inputTokens: 12, outputTokens: 4, totalTokens: 16 });
    expect(whole.stopReason).toBe('end_turn');

    const streamed = await aws().send(new ConverseStreamCommand({ modelId: NOVA, messages }));
    let text = '';
    let usage: unknown;
    for await (const event of streamed.stream ?? []) {
      text += event.contentBlockDelta?.delta?.text ?? '';
      usage = event.metadata?.usage ?? usage;
    }
    expect(text).toBe('Nova says hi.');
    expect(usage).toMatchObject({ inputTokens: 12, outputTokens: 4 });
  });

  it('refuses a wrong secret with Bedrock’s signature error', async () => {
    const refused = await aws('wrong-secret')
      .send(new ConverseCommand({ modelId: NOVA, messages: [{ role: 'user', content: [{ text: 'Hi' }] }] }))
      .catch((error: unknown) => error as { name: string; message: string; $metadata: { httpStatusCode: number } });
    expect(refused).toMatchObject({ name: 'InvalidSignatureException', message: SIGNATURE_MISMATCH });
    expect((refused as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(403);
  });

  it('refuses a model that needs an inference profile by its bare id, and takes the profile', async () => {
    const bare = 'anthropic.claude-sonnet-4-20250514-v1:0';
    const refused = await aws()
      .send(new InvokeModelCommand({ modelId: bare, body: JSON.stringify(claudeBody) }))
      .catch((error: unknown) => error as Error);
    expect(refused).toMatchObject({ name: 'ValidationException' });
    expect((refused as Error).message).toContain('inference profile');
    const answer = await aws().send(
      new InvokeModelCommand({ modelId: `us.${bare}`, body: JSON.stringify(claudeBody) }),
    );
    expect(answer.$metadata.httpStatusCode).toBe(200);
  });
});

describe('mock Bedrock, seen by @anthropic-ai/bedrock-sdk', () => {
  const anthropic = (awsSecretKey = mock.credentials.secretAccessKey) =>
    new AnthropicBedrock({
      baseURL: mock.url,
      awsAccessKey: mock.credentials.accessKeyId,
      awsSecretKey,
      awsRegion: 'eu-central-1',
      maxRetries: 0,
    });

  it('answers messages.create and its stream', async () => {
    mock.behaviour = { reply: 'Claude on Bedrock.' };
    const message = await anthropic().messages.create({
      model: CLAUDE,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Claude on Bedrock.' }]);
    const stream = anthropic().messages.stream({
      model: CLAUDE,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(await stream.finalText()).toBe('Claude on Bedrock.');
    expect(mock.requests.at(-1)).toMatchObject({ operation: 'invoke-with-response-stream', region: 'eu-central-1' });
  });

  it('refuses a wrong secret with 403 and the signature message', async () => {
    const refused = await anthropic('wrong')
      .messages.create({ model: CLAUDE, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] })
      .then(
        () => ({ status: 200, message: 'accepted' }),
        (error: unknown) => error as { status: number; message: string },
      );
    expect(refused.status).toBe(403);
    expect(refused.message).toContain('The request signature we calculated does not match');
  });
});

describe('mock Bedrock control plane, seen by @aws-sdk/client-bedrock', () => {
  const control = (secretAccessKey = mock.credentials.secretAccessKey) =>
    new BedrockClient({
      endpoint: mock.url,
      region: 'us-west-2',
      credentials: { accessKeyId: mock.credentials.accessKeyId, secretAccessKey },
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler(),
    });

  it('lists text foundation models with ListFoundationModels, signed for the same service', async () => {
    const answer = await control().send(new ListFoundationModelsCommand({ byOutputModality: 'TEXT' }));
    const ids = (answer.modelSummaries ?? []).map((model) => model.modelId);
    expect(ids).toContain(NOVA);
    expect(answer.modelSummaries?.every((model) => model.outputModalities?.includes('TEXT'))).toBe(true);
    expect(mock.requests.at(-1)).toMatchObject({ operation: 'list-foundation-models', auth: 'sigv4' });
  });

  it('refuses a wrong secret as Bedrock does', async () => {
    await expect(control('wrong-secret').send(new ListFoundationModelsCommand({}))).rejects.toThrow(SIGNATURE_MISMATCH);
  });
});

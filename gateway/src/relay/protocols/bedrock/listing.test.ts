import { describe, expect, it } from 'vitest';
import { jsonAnswer } from '../answer.ts';
import { fakeTransport } from '../test-support.ts';
import { listBedrockModels } from './listing.ts';

const summary = (modelId: string, outputModalities: string[], inferenceTypesSupported: string[]) => ({
  modelId,
  outputModalities,
  inferenceTypesSupported,
});
const CATALOGUE = {
  modelSummaries: [
    summary('anthropic.claude-sonnet-4-20250514-v1:0', ['TEXT'], ['INFERENCE_PROFILE']),
    summary('amazon.nova-pro-v1:0', ['TEXT'], ['ON_DEMAND', 'INFERENCE_PROFILE']),
    summary('amazon.titan-embed-text-v2:0', ['EMBEDDING'], ['ON_DEMAND']),
    summary('meta.llama3-1-70b-instruct-v1:0:128k', ['TEXT'], ['PROVISIONED']),
  ],
};
const channel = { baseUrl: '', other: '' };

describe('listBedrockModels', () => {
  it('signs ListFoundationModels for the key’s region at the control-plane host, keeping callable text models', async () => {
    const { transport, sent } = fakeTransport(() => jsonAnswer(200, CATALOGUE));
    const models = await listBedrockModels({
      channel,
      key: 'AKIDEXAMPLE|secret|us-west-2',
      transport,
      timeoutMs: 1000,
    });
    expect(models).toEqual(['anthropic.claude-sonnet-4-20250514-v1:0', 'amazon.nova-pro-v1:0']);
    expect(sent[0]?.url).toBe('https://bedrock.us-west-2.amazonaws.com/foundation-models?byOutputModality=TEXT');
    expect(sent[0]?.method).toBe('GET');
    expect(sent[0]?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=accept;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  it('sends a Bedrock API key as a Bearer token to the channel’s base URL', async () => {
    const { transport, sent } = fakeTransport(() => jsonAnswer(200, CATALOGUE));
    await listBedrockModels({
      channel: { baseUrl: 'http://proxy.test/', other: '' },
      key: 'ABSKkey|eu-west-1',
      transport,
      timeoutMs: 1000,
    });
    expect(sent[0]?.url).toBe('http://proxy.test/foundation-models?byOutputModality=TEXT');
    expect(sent[0]?.headers.authorization).toBe('Bearer ABSKkey');
  });

  it('gives Bedrock’s refusal, the key left out should it be echoed', async () => {
    const { transport } = fakeTransport(() => {
      const answer = jsonAnswer(403, {
        message: 'The security token included in the request is invalid: AKIDEXAMPLE|secret|us-west-2',
      });
      const errorType = 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/';
      return { ...answer, headers: { ...answer.headers, 'x-amzn-errortype': errorType } };
    });
    const failure = listBedrockModels({ channel, key: 'AKIDEXAMPLE|secret|us-west-2', transport, timeoutMs: 1000 });
    await expect(failure).rejects.toMatchObject({ code: 'UPSTREAM_REFUSED', params: { status: 403 } });
    await expect(failure).rejects.toSatisfy(
      (error: Error) =>
        error.message.includes('The security token included in the request is invalid: ***') &&
        !error.message.includes('secret'),
    );
  });

  it('says an answer of another shape is unreadable, and an unreachable host is unreachable', async () => {
    const other = fakeTransport(() => jsonAnswer(200, { models: [] }));
    await expect(
      listBedrockModels({ channel, key: 'k|us-east-1', transport: other.transport, timeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_MODELS_UNREADABLE' });
    const down = fakeTransport(() => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    });
    await expect(
      listBedrockModels({ channel, key: 'k|us-east-1', transport: down.transport, timeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_UNREACHABLE', params: { detail: 'ECONNREFUSED' } });
  });

  it('refuses a key without its region before any request', async () => {
    const { transport, sent } = fakeTransport(() => jsonAnswer(200, CATALOGUE));
    await expect(listBedrockModels({ channel, key: 'AKID|secret', transport, timeoutMs: 1000 })).rejects.toMatchObject({
      code: 'channel:key_malformed',
    });
    expect(sent).toEqual([]);
  });
});

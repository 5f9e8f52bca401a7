import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockGemini, startMockGemini } from '../../../../../tests/support/mock-gemini.ts';
import { OPTION_DEFINITIONS, type OptionsService } from '../../../domain/options/index.ts';
import type { ConvertContext, FormatAdapter, Json } from '../../convert/types.ts';
import { SseParser } from '../../sse.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { geminiAdapter, geminiEmbedAdapter } from './convert/index.ts';
import { geminiProvider } from './index.ts';

const fakeOptions = (values: Record<string, string> = {}): OptionsService => {
  const all = new Map<string, string>(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
  for (const [key, value] of Object.entries(values)) all.set(key, value);
  return {
    getBoolean: (key: string) => all.get(key) === 'true',
    getNumber: (key: string) => Number(all.get(key)),
    getJson: (key: string) => JSON.parse(all.get(key)!),
  } as unknown as OptionsService;
};

const channel = (baseUrl: string) =>
  ({ id: 1, type: 24, name: 'gemini', baseUrl, keys: ['AIza-test'] }) as ChannelSnapshot;

let mock: MockGemini;

beforeAll(async () => {
  mock = await startMockGemini();
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  mock.behaviour = {};
  mock.requests.length = 0;
});

describe('the Gemini mock speaks Google’s protocol (checked with the official @google/genai client)', () => {
  const client = (apiKey = 'AIza-good') =>
    new GoogleGenAI({ apiKey, httpOptions: { baseUrl: mock.url, apiVersion: 'v1beta' } });

  it('generateContent, with usage, thoughts and a function call', async () => {
    mock.behaviour = { reply: 'Bonjour', usage: { promptTokenCount: 11, cachedContentTokenCount: 4 } };
    const answer = await client().models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' });
    expect(answer.text).toBe('Bonjour');
    expect(answer.usageMetadata).toMatchObject({
      promptTokenCount: 11,
      cachedContentTokenCount: 4,
      candidatesTokenCount: 2,
    });
    const request = mock.requests[0]!;
    expect(request.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(request.headers['x-goog-api-key']).toBe('AIza-good');

    const thinking = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Weather?',
      config: {
        thinkingConfig: { includeThoughts: true, thinkingBudget: 100 },
        tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'w' }] }],
      },
    });
    expect(thinking.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
    expect(thinking.candidates?.[0]?.content?.parts?.[0]).toMatchObject({ thought: true });
    expect(thinking.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
  });

  it('streams with alt=sse, the last chunk carrying the finish and the full usage', async () => {
    mock.behaviour = { reply: 'A streamed answer.' };
    const chunks = [];
    for await (const chunk of await client().models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'Hi',
    })) {
      chunks.push(chunk);
    }
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe('A streamed answer.');
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata?.candidatesTokenCount).toBe(5);
    expect(mock.requests[0]!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('embeds, lists models, and refuses a bad key the way Google does', async () => {
    mock.behaviour = { embedding: [1, 2] };
    const embedded = await client().models.embedContent({ model: 'gemini-embedding-001', contents: ['a', 'b'] });
    expect(embedded.embeddings?.map((e) => e.values)).toEqual([
      [1, 2],
      [1, 2],
    ]);
    const pager = await client().models.list();
    const names = [];
    for await (const model of pager) names.push(model.name);
    expect(names).toContain('models/gemini-2.5-flash');

    mock.behaviour = { refuseKeys: ['AIza-bad'] };
    const refused = await client('AIza-bad')
      .models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).message).toContain('API key not valid');

    const keyless = await fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"contents":[]}',
    });
    expect(keyless.status).toBe(403);
    expect(((await keyless.json()) as Json).error.status).toBe('PERMISSION_DENIED');
    const byQuery = await fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-bad`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"contents":[]}',
    });
    expect(byQuery.status).toBe(400);
  });

  it('fails with a scripted status and Google error body', async () => {
    mock.behaviour = { failWith: { status: 429, message: 'Resource has been exhausted', times: 1 } };
    const response = await fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
      body: '{"contents":[]}',
    });
    expect(response.status).toBe(429);
    expect(geminiProvider.parseError(429, await response.text())).toEqual({
      status: 429,
      message: 'Resource has been exhausted',
      type: 'rate_limit_error',
      code: 'RESOURCE_EXHAUSTED',
    });
  });
});

/** What the relay does for one call: convert, prepare, build, send; the answer converted back. */
async function relay(
  format: WireFormat,
  adapter: FormatAdapter,
  hubBody: Json,
  model: string,
  options: Record<string, string> = {},
) {
  const ctx: ConvertContext = { model, upstreamModel: model, stream: hubBody.stream === true };
  const upstreamFormat = geminiProvider.nativeFormat(format)!;
  const prepared = geminiProvider.prepareBody(upstreamFormat, adapter.requestFromHub(hubBody, ctx), {
    channel: channel(mock.url),
    model,
    upstreamModel: model,
    stream: ctx.stream,
    options: fakeOptions(options),
    clientHeaders: {},
  });
  const request = geminiProvider.buildRequest({
    format: upstreamFormat,
    channel: channel(mock.url),
    key: 'AIza-test',
    upstreamModel: prepared.upstreamModel,
    body: JSON.stringify(prepared.body),
    json: prepared.body,
    stream: ctx.stream,
    options: fakeOptions(options),
    clientHeaders: {},
  });
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  return { ctx, upstreamFormat, response };
}

describe('an OpenAI-format call served by the Gemini provider against the mock', () => {
  it('converts a chat request with tools and thinking, and reads the answer and its usage', async () => {
    mock.behaviour = { usage: { promptTokenCount: 50, candidatesTokenCount: 7, thoughtsTokenCount: 13 } };
    const { ctx, upstreamFormat, response } = await relay(
      'openai-chat',
      geminiAdapter,
      {
        model: 'gemini-2.5-flash-thinking-1000',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris?' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
      },
      'gemini-2.5-flash-thinking-1000',
      { 'gemini.thinking_adapter_enabled': 'true' },
    );
    expect(response.status).toBe(200);
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('AIza-test');
    expect(sent.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 1000 });
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(sent.body.safetySettings).toHaveLength(5);
    expect(sent.body.model).toBeUndefined();

    const answer = (await response.json()) as Json;
    expect(geminiProvider.usageFromBody(upstreamFormat, answer)).toEqual({
      promptTokens: 50,
      completionTokens: 20,
      reasoningTokens: 13,
    });
    const hub = geminiAdapter.responseToHub(answer, ctx);
    expect(hub.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        reasoning_content: 'Thinking about the answer.',
        reasoning_signature: expect.any(String),
        tool_calls: [
          { id: 'call_mock-response-1_0', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
    });

    // The tool result goes back as a functionResponse named after the call; the model then answers.
    mock.requests.length = 0;
    const second = await relay(
      'openai-chat',
      geminiAdapter,
      {
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          hub.choices[0].message,
          { role: 'tool', tool_call_id: 'call_mock-response-1_0', content: '{"temperature":21}' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      },
      'gemini-2.5-flash',
    );
    const contents = mock.requests[0]!.body.contents;
    expect(contents[1].parts.at(-1)).toMatchObject({
      functionCall: { name: 'get_weather' },
      thoughtSignature: expect.any(String),
    });
    expect(contents[2].parts).toEqual([{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }]);
    expect(
      geminiAdapter.responseToHub((await second.response.json()) as Json, second.ctx).choices[0].message.content,
    ).toBe('Hello from the Gemini mock.');
  });

  it('streams: events observed and converted to OpenAI chunks one by one', async () => {
    mock.behaviour = { reply: 'Streaming through the hub.', usage: { promptTokenCount: 9 } };
    const { ctx, upstreamFormat, response } = await relay(
      'openai-chat',
      geminiAdapter,
      { model: 'gemini-2.5-flash', stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      'gemini-2.5-flash',
    );
    expect(mock.requests[0]!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const parser = new SseParser();
    const observer = geminiProvider.streamObserver(upstreamFormat);
    const converter = geminiAdapter.streamToHub(ctx);
    const out: Json[] = [];
    for await (const bytes of response.body!) {
      for (const event of parser.push(bytes)) {
        observer.observe(event);
        out.push(...converter.push(event).map((e) => JSON.parse(e.data)));
      }
    }
    for (const event of parser.end()) out.push(...converter.push(event).map((e) => JSON.parse(e.data)));
    out.push(...converter.end().map((e) => JSON.parse(e.data)));
    expect(observer.text).toBe('Streaming through the hub.');
    expect(observer.usage).toEqual({ promptTokens: 9, completionTokens: 7 });
    const text = out.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Streaming through the hub.');
    expect(out.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(out.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 7 } });
  });

  it('embeddings: a string is embedContent, an array batchEmbedContents with the upstream model', async () => {
    mock.behaviour = { embedding: [0.5, 0.5] };
    const single = await relay(
      'openai-embeddings',
      geminiEmbedAdapter,
      { model: 'e', input: 'one' },
      'gemini-embedding-001',
    );
    expect(mock.requests[0]!.path).toBe('/v1beta/models/gemini-embedding-001:embedContent');
    expect(geminiEmbedAdapter.responseToHub((await single.response.json()) as Json, single.ctx).data).toEqual([
      { object: 'embedding', index: 0, embedding: [0.5, 0.5] },
    ]);
    const batch = await relay(
      'openai-embeddings',
      geminiEmbedAdapter,
      { model: 'e', input: ['one', 'two'] },
      'gemini-embedding-001',
    );
    expect(batch.response.status).toBe(200);
    expect(mock.requests[1]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    const answer = (await batch.response.json()) as Json;
    expect(geminiProvider.usageFromBody(batch.upstreamFormat, answer)).toBeUndefined();
    expect(geminiEmbedAdapter.responseToHub(answer, batch.ctx).data).toHaveLength(2);
  });
});

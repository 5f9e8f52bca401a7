import { describe, expect, it, vi } from 'vitest';
import { OPTION_DEFINITIONS, type OptionsService } from '../../../domain/options/index.ts';
import type { Json } from '../../convert/types.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { testChannel } from '../test-support.ts';
import type { ProviderContext } from '../types.ts';
import { geminiProvider, SKIP_SIGNATURE } from './index.ts';

/** The options service's getters over the defined defaults, with some values replaced. */
function fakeOptions(values: Record<string, string> = {}): OptionsService {
  const all = new Map<string, string>(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
  for (const [key, value] of Object.entries(values)) all.set(key, value);
  const get = (key: string) => {
    const value = all.get(key);
    if (value === undefined) throw new Error(`unknown option ${key}`);
    return value;
  };
  return {
    getBoolean: (key: string) => get(key) === 'true',
    getNumber: (key: string) => Number(get(key)),
    getJson: (key: string) => JSON.parse(get(key)),
  } as unknown as OptionsService;
}

const channel = (partial: Partial<ChannelSnapshot> = {}): ChannelSnapshot =>
  testChannel({ type: 24, name: 'gemini', keys: ['AIza-test'], ...partial });

const context = (upstreamModel: string, values: Record<string, string> = {}): ProviderContext => ({
  channel: channel(),
  model: upstreamModel,
  upstreamModel,
  stream: false,
  options: fakeOptions(values),
  clientHeaders: {},
});

const prepare = (
  body: Json,
  model = 'gemini-2.5-flash',
  values: Record<string, string> = {},
  format: WireFormat = 'gemini-generate',
) => geminiProvider.prepareBody(format, body, context(model, values));

const thinkingOn = { 'gemini.thinking_adapter_enabled': 'true' };

describe('Gemini provider: formats', () => {
  it('serves chat-like formats as generateContent and embeddings as embedContent', () => {
    expect([...geminiProvider.formats]).toEqual(['gemini-generate', 'gemini-embed']);
    for (const format of ['openai-chat', 'openai-responses', 'claude-messages', 'gemini-generate'] as const) {
      expect(geminiProvider.nativeFormat(format)).toBe('gemini-generate');
    }
    expect(geminiProvider.nativeFormat('openai-embeddings')).toBe('gemini-embed');
    expect(geminiProvider.nativeFormat('gemini-embed')).toBe('gemini-embed');
    expect(geminiProvider.nativeFormat('openai-images')).toBeUndefined();
    expect(geminiProvider.nativeFormat('openai-audio-speech')).toBeUndefined();
  });
});

describe('Gemini provider: prepareBody', () => {
  it('removes the model and adds the default safety settings (OFF, civic integrity BLOCK_NONE)', () => {
    const { body, upstreamModel } = prepare({ model: 'x', contents: [] });
    expect(upstreamModel).toBe('gemini-2.5-flash');
    expect(body.model).toBeUndefined();
    expect(body.safetySettings).toEqual([
      { category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF' },
      { category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'OFF' },
      { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', threshold: 'OFF' },
      { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', threshold: 'OFF' },
      { category: 'HARM_CATEGORY_CIVIC_INTEGRITY', threshold: 'BLOCK_NONE' },
    ]);
  });

  it('takes thresholds by category, then model, then default, and keeps the client’s own', () => {
    const settings = {
      'gemini.safety_settings': JSON.stringify({
        default: 'BLOCK_ONLY_HIGH',
        'gemini-2.5-pro': 'BLOCK_NONE',
        HARM_CATEGORY_HATE_SPEECH: 'BLOCK_LOW_AND_ABOVE',
      }),
    };
    const flash = prepare({ contents: [] }, 'gemini-2.5-flash', settings).body.safetySettings;
    expect(flash.map((s: Json) => s.threshold)).toEqual([
      'BLOCK_ONLY_HIGH',
      'BLOCK_LOW_AND_ABOVE',
      'BLOCK_ONLY_HIGH',
      'BLOCK_ONLY_HIGH',
      'BLOCK_ONLY_HIGH',
    ]);
    const pro = prepare({ contents: [] }, 'gemini-2.5-pro', settings).body.safetySettings;
    expect(pro.map((s: Json) => s.threshold)).toEqual([
      'BLOCK_NONE',
      'BLOCK_LOW_AND_ABOVE',
      'BLOCK_NONE',
      'BLOCK_NONE',
      'BLOCK_NONE',
    ]);
    const own = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }];
    expect(prepare({ contents: [], safetySettings: own }).body.safetySettings).toEqual(own);
    expect(prepare({ contents: [], safety_settings: own }).body).toEqual({ contents: [], safetySettings: own });
    const snake = prepare(
      { contents: [], generation_config: { maxOutputTokens: 100 } },
      'gemini-2.5-flash-thinking',
      thinkingOn,
    );
    expect(snake.body.generation_config).toBeUndefined();
    expect(snake.body.generationConfig).toEqual({
      maxOutputTokens: 100,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 60 },
    });
  });

  it('leaves thinking suffixes alone while the adapter is off (the default)', () => {
    const { body, upstreamModel } = prepare({ contents: [] }, 'gemini-2.5-flash-thinking');
    expect(upstreamModel).toBe('gemini-2.5-flash-thinking');
    expect(body.generationConfig).toBeUndefined();
  });

  it('turns -thinking into a budget of maxOutputTokens × percentage, or dynamic when unknown', () => {
    const sized = prepare(
      { contents: [], generationConfig: { maxOutputTokens: 1000 } },
      'gemini-2.5-flash-thinking',
      thinkingOn,
    );
    expect(sized.upstreamModel).toBe('gemini-2.5-flash');
    expect(sized.body.generationConfig).toEqual({
      maxOutputTokens: 1000,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 600 },
    });
    const custom = prepare({ contents: [], generationConfig: { maxOutputTokens: 1000 } }, 'gemini-2.5-flash-thinking', {
      ...thinkingOn,
      'gemini.thinking_adapter_budget_tokens_percentage': '0.25',
    });
    expect(custom.body.generationConfig.thinkingConfig.thinkingBudget).toBe(250);
    const dynamic = prepare({ contents: [] }, 'gemini-2.5-flash-thinking', thinkingOn);
    expect(dynamic.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: -1 });
    const tooBig = prepare(
      { contents: [], generationConfig: { maxOutputTokens: 65536 } },
      'gemini-2.5-pro-thinking',
      thinkingOn,
    );
    expect(tooBig.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true });
  });

  it('turns -thinking-<N> into budget N unless above 24576, and -nothinking into budget 0', () => {
    const numbered = prepare({ contents: [] }, 'gemini-2.5-flash-thinking-2048', thinkingOn);
    expect(numbered.upstreamModel).toBe('gemini-2.5-flash');
    expect(numbered.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 2048 });
    const cap = prepare({ contents: [] }, 'gemini-2.5-flash-thinking-24576', thinkingOn);
    expect(cap.body.generationConfig.thinkingConfig.thinkingBudget).toBe(24576);
    const over = prepare({ contents: [] }, 'gemini-2.5-flash-thinking-24577', thinkingOn);
    expect(over.upstreamModel).toBe('gemini-2.5-flash');
    expect(over.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true });
    const off = prepare(
      { contents: [], generationConfig: { temperature: 1, thinkingConfig: { includeThoughts: true } } },
      'gemini-2.5-flash-nothinking',
      thinkingOn,
    );
    expect(off.upstreamModel).toBe('gemini-2.5-flash');
    expect(off.body.generationConfig).toEqual({ temperature: 1, thinkingConfig: { thinkingBudget: 0 } });
  });

  it('asks image models for image output', () => {
    const image = prepare({ contents: [] }, 'gemini-2.5-flash-image');
    expect(image.body.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'] });
    const own = prepare(
      { contents: [], generationConfig: { responseModalities: ['IMAGE'] } },
      'gemini-2.5-flash-image',
    );
    expect(own.body.generationConfig.responseModalities).toEqual(['IMAGE']);
    expect(prepare({ contents: [] }, 'gemini-2.5-flash').body.generationConfig).toBeUndefined();
  });

  it('signs foreign function calls and drops function response ids (both options on by default)', () => {
    const contents = [
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'x', name: 'a', response: {} } }] },
      { role: 'model', parts: [{ functionCall: { name: 'c', args: {} }, thoughtSignature: 'real' }] },
    ];
    const { body } = prepare({ contents });
    expect(body.contents[1].parts).toEqual([
      { functionCall: { name: 'a', args: {} }, thoughtSignature: SKIP_SIGNATURE },
      { functionCall: { name: 'b', args: {} } },
    ]);
    expect(body.contents[2].parts[0].functionResponse).toEqual({ name: 'a', response: {} });
    expect(body.contents[3].parts[0].thoughtSignature).toBe('real');
    expect(contents[1]!.parts[0]).not.toHaveProperty('thoughtSignature');
    const kept = prepare({ contents }, 'gemini-2.5-flash', {
      'gemini.function_call_thought_signature_enabled': 'false',
      'gemini.remove_function_response_id_enabled': 'false',
    }).body;
    expect(kept.contents).toEqual(contents);
  });

  it('embeddings: no model, no safety settings, each batch request names the upstream model', () => {
    const { body } = prepare(
      { model: 'm', requests: [{ model: 'models/client-name', content: { parts: [{ text: 'a' }] } }] },
      'gemini-embedding-001',
      {},
      'gemini-embed',
    );
    expect(body).toEqual({
      requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } }],
    });
  });
});

describe('Gemini provider: buildRequest', () => {
  const build = (
    input: Partial<Parameters<typeof geminiProvider.buildRequest>[0]> & { values?: Record<string, string> } = {},
  ) =>
    geminiProvider.buildRequest({
      format: 'gemini-generate',
      channel: channel(),
      key: 'AIza-test',
      upstreamModel: 'gemini-2.5-flash',
      body: '{"contents":[]}',
      stream: false,
      clientHeaders: {},
      ...input,
      options: fakeOptions(input.values),
    });

  it('posts to {base}/{version}/models/{model}:{method} with the key in x-goog-api-key', () => {
    const request = build();
    expect(request).toEqual({
      url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      method: 'POST',
      headers: { 'x-goog-api-key': 'AIza-test', 'content-type': 'application/json' },
      body: '{"contents":[]}',
    });
    expect(request.url).not.toContain('key=');
    expect(build({ stream: true }).url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(build({ channel: channel({ baseUrl: 'https://proxy.example/gemini/' }) }).url).toBe(
      'https://proxy.example/gemini/v1beta/models/gemini-2.5-flash:generateContent',
    );
  });

  it('takes the version from gemini.version_settings', () => {
    expect(build({ upstreamModel: 'gemini-1.0-pro' }).url).toContain('/v1/models/gemini-1.0-pro:generateContent');
    const values = { 'gemini.version_settings': JSON.stringify({ default: 'v1alpha', 'gemini-2.5-flash': 'v1' }) };
    expect(build({ values }).url).toContain('/v1/models/gemini-2.5-flash:');
    expect(build({ values, upstreamModel: 'gemini-2.5-pro' }).url).toContain('/v1alpha/models/gemini-2.5-pro:');
  });

  it('embeds with embedContent, or batchEmbedContents when the body has requests', () => {
    const embed = (json: Record<string, unknown>) =>
      build({ format: 'gemini-embed', upstreamModel: 'gemini-embedding-001', body: JSON.stringify(json), json });
    expect(embed({ content: {} }).url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:embedContent',
    );
    expect(embed({ requests: [] }).url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
    );
    expect(() => build({ format: 'openai-chat' })).toThrow(/no operation/);
  });
});

describe('Gemini provider: usage, streams and errors', () => {
  it('reads usage from usageMetadata (thoughts billed as output, cache inside the prompt)', () => {
    expect(
      geminiProvider.usageFromBody('gemini-generate', {
        candidates: [],
        usageMetadata: {
          promptTokenCount: 100,
          cachedContentTokenCount: 60,
          candidatesTokenCount: 20,
          thoughtsTokenCount: 30,
          totalTokenCount: 150,
        },
      }),
    ).toEqual({ promptTokens: 100, completionTokens: 50, cachedTokens: 60, reasoningTokens: 30 });
    expect(
      geminiProvider.usageFromBody('gemini-generate', {
        usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3 },
      }),
    ).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(geminiProvider.usageFromBody('gemini-embed', { embedding: { values: [1] } })).toBeUndefined();
    expect(
      geminiProvider.usageFromBody('gemini-generate', [
        { usageMetadata: { promptTokenCount: 7 } },
        { usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 4 } },
      ]),
    ).toEqual({ promptTokens: 7, completionTokens: 4 });
  });

  it('observes a stream: text and thought text, function calls, the last usage', () => {
    const observer = geminiProvider.streamObserver('gemini-generate');
    for (const chunk of [
      {
        candidates: [{ content: { parts: [{ text: 'Thinking. ', thought: true }] } }],
        usageMetadata: { promptTokenCount: 9 },
      },
      { candidates: [{ content: { parts: [{ text: 'Hello' }] } }], usageMetadata: { promptTokenCount: 9 } },
      {
        candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 2 },
      },
    ]) {
      observer.observe({ data: JSON.stringify(chunk) });
    }
    observer.observe({ data: 'not json' });
    expect(observer.text).toBe('Thinking. Hello');
    expect(observer.toolCalls).toBe(1);
    expect(observer.usage).toEqual({ promptTokens: 9, completionTokens: 6, reasoningTokens: 2 });
  });

  it('parses a stream only for function calls as it goes, then its latest usage, and its text only if asked', () => {
    const observer = geminiProvider.streamObserver('gemini-generate');
    const chunk = (text: string, candidatesTokenCount: number) =>
      JSON.stringify({
        candidates: [{ content: { parts: [{ text }] } }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount },
      });
    const parse = vi.spyOn(JSON, 'parse');
    for (let i = 1; i <= 10; i++) observer.observe({ data: chunk(`t${i} `, i) });
    // The last chunk's usageMetadata is no usage: the one before it counts.
    observer.observe({ data: '{"candidates":[],"usageMetadata":null}' });
    const whileStreaming = parse.mock.calls.length;
    const usage = observer.usage;
    const forUsage = parse.mock.calls.length - whileStreaming;
    parse.mockRestore();
    expect(whileStreaming).toBe(0);
    expect(forUsage).toBe(2);
    expect(usage).toEqual({ promptTokens: 9, completionTokens: 10 });
    expect(observer.text).toBe('t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 ');
  });

  it('parses Google error bodies, arrays of them, and plain text', () => {
    expect(
      geminiProvider.parseError(
        400,
        JSON.stringify({
          error: {
            code: 400,
            message: 'API key not valid. Please pass a valid API key.',
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
          },
        }),
      ),
    ).toEqual({
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
      type: 'invalid_request_error',
      code: 'API_KEY_INVALID',
    });
    expect(
      geminiProvider.parseError(
        429,
        '[{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}]',
      ),
    ).toEqual({ status: 429, message: 'Resource exhausted', type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' });
    expect(
      geminiProvider.parseError(503, '{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}'),
    ).toMatchObject({ type: 'server_error', code: 'UNAVAILABLE' });
    expect(geminiProvider.parseError(502, '<html>bad gateway</html>')).toEqual({
      status: 502,
      message: '<html>bad gateway</html>',
      type: 'upstream_error',
      code: null,
    });
    expect(geminiProvider.parseError(500, '')).toMatchObject({ message: 'upstream answered HTTP 500' });
  });
});

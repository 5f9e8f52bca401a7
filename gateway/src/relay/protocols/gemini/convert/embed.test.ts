import { describe, expect, it } from 'vitest';
import type { ConvertContext } from '../../../convert/types.ts';
import { geminiEmbedAdapter } from './index.ts';

const ctx = (): ConvertContext => ({
  model: 'text-embedding-004',
  upstreamModel: 'gemini-embedding-001',
  stream: false,
});

describe('Gemini embeddings ⇄ OpenAI embeddings', () => {
  it('embedContent: one text in, one embedding out', () => {
    const c = ctx();
    const hub = geminiEmbedAdapter.requestToHub(
      {
        model: 'models/text-embedding-004',
        content: { parts: [{ text: 'Hello' }, { text: 'world' }] },
        taskType: 'RETRIEVAL_QUERY',
        outputDimensionality: 256,
      },
      c,
    );
    expect(hub).toEqual({
      model: 'text-embedding-004',
      input: 'Hello\nworld',
      encoding_format: 'float',
      dimensions: 256,
    });
    const answer = geminiEmbedAdapter.responseFromHub(
      {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }],
        usage: { prompt_tokens: 2 },
      },
      c,
    );
    expect(answer).toEqual({ embedding: { values: [0.5, 0.25] } });
  });

  it('batchEmbedContents: several texts in, embeddings out in order (a batch of one stays a batch)', () => {
    const c = ctx();
    const hub = geminiEmbedAdapter.requestToHub(
      {
        requests: [
          { model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] } },
          { model: 'models/text-embedding-004', content: { parts: [{ text: 'b' }] } },
        ],
      },
      c,
    );
    expect(hub).toEqual({ model: 'text-embedding-004', input: ['a', 'b'], encoding_format: 'float' });
    expect(
      geminiEmbedAdapter.responseFromHub(
        {
          data: [
            { index: 1, embedding: [2] },
            { index: 0, embedding: [1] },
          ],
        },
        c,
      ),
    ).toEqual({ embeddings: [{ values: [1] }, { values: [2] }] });

    const one = ctx();
    geminiEmbedAdapter.requestToHub({ requests: [{ content: { parts: [{ text: 'a' }] } }] }, one);
    expect(geminiEmbedAdapter.responseFromHub({ data: [{ index: 0, embedding: [1] }] }, one)).toEqual({
      embeddings: [{ values: [1] }],
    });
  });

  it('OpenAI input to Gemini: a string is embedContent, an array batchEmbedContents naming the upstream model', () => {
    expect(geminiEmbedAdapter.requestFromHub({ model: 'x', input: 'hi', dimensions: 8 }, ctx())).toEqual({
      content: { parts: [{ text: 'hi' }] },
      outputDimensionality: 8,
    });
    expect(geminiEmbedAdapter.requestFromHub({ model: 'x', input: ['a', 'b'] }, ctx())).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    });
    expect(() => geminiEmbedAdapter.requestFromHub({ input: [[1, 2, 3]] }, ctx())).toThrow(/text input only/);
  });

  it('Gemini answers to OpenAI: data in order, no usage (left to the estimate), base64 when asked', () => {
    const c = ctx();
    geminiEmbedAdapter.requestFromHub({ input: ['a', 'b'] }, c);
    expect(geminiEmbedAdapter.responseToHub({ embeddings: [{ values: [0.1] }, { values: [0.2] }] }, c)).toEqual({
      object: 'list',
      model: 'text-embedding-004',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1] },
        { object: 'embedding', index: 1, embedding: [0.2] },
      ],
    });
    expect(geminiEmbedAdapter.responseToHub({ embedding: { values: [1, 2] } }, c).data).toEqual([
      { object: 'embedding', index: 0, embedding: [1, 2] },
    ]);

    const b = ctx();
    geminiEmbedAdapter.requestFromHub({ input: 'a', encoding_format: 'base64' }, b);
    const encoded = geminiEmbedAdapter.responseToHub({ embedding: { values: [1, -2.5] } }, b).data[0].embedding;
    expect(typeof encoded).toBe('string');
    expect(Array.from(new Float32Array(Uint8Array.from(Buffer.from(encoded, 'base64')).buffer))).toEqual([1, -2.5]);
    // And base64 vectors from an OpenAI upstream decode back to numbers for a Gemini client.
    expect(geminiEmbedAdapter.responseFromHub({ data: [{ index: 0, embedding: encoded }] }, ctx())).toEqual({
      embedding: { values: [1, -2.5] },
    });
  });

  it('renders errors in Google shape and refuses to stream', () => {
    expect(
      geminiEmbedAdapter.errorBody({ status: 429, message: 'slow down', type: 'rate_limit_error', code: null }),
    ).toEqual({ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } });
    expect(() => geminiEmbedAdapter.streamToHub(ctx())).toThrow();
  });
});

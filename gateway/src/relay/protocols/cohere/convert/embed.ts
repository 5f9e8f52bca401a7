import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubUsageFromCohere } from '../usage.ts';
import { asArray, asNumber, isObject, put } from './fields.ts';

/** Whether the OpenAI client asked for base64 vectors (the openai SDK's default), noted per call. */
const base64Wanted = new WeakMap<ConvertContext, boolean>();

/**
 * A hub embeddings request → Cohere v2 embed: the texts as documents to search (`search_document`,
 * what an OpenAI client's embeddings are used for), float vectors.
 */
export function hubToCohereEmbed(body: Json, ctx: ConvertContext): Json {
  base64Wanted.set(ctx, body.encoding_format === 'base64');
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : asArray(input);
  if (texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw new Error('Cohere embedding models take text input only (a string or an array of strings)');
  }
  const request: Json = {
    model: ctx.upstreamModel,
    texts,
    input_type: 'search_document',
    embedding_types: ['float'],
  };
  put(request, 'output_dimension', asNumber(body.dimensions));
  return request;
}

/** A Cohere v2 embed answer (`embeddings.float`) → an OpenAI embeddings list. */
export function cohereEmbedToHub(body: Json, ctx: ConvertContext): Json {
  const vectors = asArray(isObject(body.embeddings) ? body.embeddings.float : body.embeddings);
  const base64 = base64Wanted.get(ctx) === true;
  const data = vectors.map((vector, index) => {
    const values = asArray(vector).filter((v) => typeof v === 'number');
    return { object: 'embedding', index, embedding: base64 ? floatsToBase64(values) : values };
  });
  const answer: Json = { object: 'list', data, model: ctx.model };
  const usage = hubUsageFromCohere(body.meta);
  if (usage) answer.usage = { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens };
  return answer;
}

function floatsToBase64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

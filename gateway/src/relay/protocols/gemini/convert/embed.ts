import type { ConvertContext, Json } from '../../../convert/types.ts';
import { asArray, asNumber, asObject, asString, count, field, isObject } from './fields.ts';

/**
 * Embeddings: Gemini embedContent / batchEmbedContents ⇄ OpenAI embeddings (the hub).
 *
 * Which Gemini answer shape a client gets (`embedding` for embedContent, `embeddings` for
 * batchEmbedContents) and which encoding an OpenAI client asked for are facts of the request that the
 * answer no longer shows, so the request's conversion notes them against the call's ConvertContext
 * (one object per call); without a note, one vector answers embedContent and several the batch.
 */

interface EmbedNote {
  batch?: boolean;
  base64?: boolean;
}

const notes = new WeakMap<ConvertContext, EmbedNote>();

function note(ctx: ConvertContext, value: EmbedNote): void {
  notes.set(ctx, { ...notes.get(ctx), ...value });
}

/** The text of one Gemini Content (its text parts, one per line). */
function contentText(content: unknown): string {
  const object = asObject(content);
  if (!object) return typeof content === 'string' ? content : '';
  return asArray(object.parts)
    .map((part) => asString(asObject(part)?.text))
    .filter((text): text is string => text !== undefined)
    .join('\n');
}

export function geminiEmbedRequestToHub(body: Json, ctx: ConvertContext): Json {
  const requests = Array.isArray(body.requests) ? body.requests.filter(isObject) : undefined;
  const items = requests ?? [body];
  const inputs = items.map((item) => contentText(field(item, 'content')));
  note(ctx, { batch: requests !== undefined });
  const hub: Json = { model: ctx.model, input: requests ? inputs : (inputs[0] ?? ''), encoding_format: 'float' };
  const dimensions = asNumber(field(items[0], 'outputDimensionality'));
  if (dimensions !== undefined) hub.dimensions = dimensions;
  return hub;
}

export function hubEmbedRequestToGemini(body: Json, ctx: ConvertContext): Json {
  note(ctx, { base64: body.encoding_format === 'base64' });
  const dimensions = asNumber(body.dimensions);
  const request = (text: string): Json => {
    const item: Json = { content: { parts: [{ text }] } };
    if (dimensions !== undefined) item.outputDimensionality = dimensions;
    return item;
  };
  const input = body.input;
  if (typeof input === 'string') return request(input);
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) {
    const model = `models/${ctx.upstreamModel}`;
    return { requests: input.map((text) => ({ model, ...request(text) })) };
  }
  throw new Error('Gemini embedding models take text input only (a string or an array of strings)');
}

export function geminiEmbedResponseToHub(body: Json, ctx: ConvertContext): Json {
  const embeddings = Array.isArray(body.embeddings) ? body.embeddings : [body.embedding];
  const base64 = notes.get(ctx)?.base64 === true;
  const data = embeddings.filter(isObject).map((embedding, index) => {
    const values = asArray(embedding.values).filter((v) => typeof v === 'number');
    return { object: 'embedding', index, embedding: base64 ? floatsToBase64(values) : values };
  });
  const hub: Json = { object: 'list', data, model: ctx.model };
  // Gemini's embedding answers carry no usage (the gateway estimates it); pass one on if it came.
  const prompt = count(asObject(body.usageMetadata)?.promptTokenCount);
  if (prompt > 0) hub.usage = { prompt_tokens: prompt, total_tokens: prompt };
  return hub;
}

export function hubEmbedResponseToGemini(body: Json, ctx: ConvertContext): Json {
  const vectors = asArray(body.data)
    .filter(isObject)
    .map((item, position) => ({ index: asNumber(item.index) ?? position, values: vectorOf(item.embedding) }))
    .sort((a, b) => a.index - b.index)
    .map((item) => item.values);
  const batch = notes.get(ctx)?.batch ?? vectors.length !== 1;
  return batch ? { embeddings: vectors.map((values) => ({ values })) } : { embedding: { values: vectors[0] ?? [] } };
}

function vectorOf(embedding: unknown): number[] {
  if (typeof embedding === 'string') {
    // A copy, so the floats start on a 4-byte boundary whatever pool the decoded buffer came from.
    const bytes = Uint8Array.from(Buffer.from(embedding, 'base64'));
    return Array.from(new Float32Array(bytes.buffer, 0, Math.floor(bytes.byteLength / 4)));
  }
  return asArray(embedding).filter((v) => typeof v === 'number');
}

function floatsToBase64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

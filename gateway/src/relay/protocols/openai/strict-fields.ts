import { createHash } from 'node:crypto';
import type { Endpoint, StrictFields } from '../../../domain/channels/registry.ts';
import type { WireFormat } from '../../types.ts';

type Json = Record<string, unknown>;

const ENDPOINT: Partial<Record<WireFormat, Endpoint>> = {
  'openai-chat': 'chat',
  'openai-embeddings': 'embeddings',
};

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A JSON body trimmed to the fields a strict upstream accepts (registry `strictFields`): OpenAI's
 * spellings renamed to the upstream's first (unless the body already has the upstream's), then every
 * other top-level field left out; chat messages keep their role's fields, tool call ids take the
 * upstream's form. Bodies of endpoints without a list pass as they are.
 */
export function keepStrictFields(fields: StrictFields, format: WireFormat, body: Json): Json {
  const endpoint = ENDPOINT[format];
  const keep = endpoint ? fields.keep[endpoint] : undefined;
  if (!keep) return body;
  const parsed = body;
  const renamed: Json = { ...parsed };
  for (const [from, to] of Object.entries(fields.rename ?? {})) {
    if (from in renamed) {
      if (!(to in parsed)) renamed[to] = renamed[from];
      delete renamed[from];
    }
  }
  if (endpoint === 'chat' && Array.isArray(renamed.messages)) {
    renamed.messages = renamed.messages.map((message) => strictMessage(fields, message));
  }
  return pick(renamed, keep);
}

function strictMessage(fields: StrictFields, message: unknown): unknown {
  if (!isObject(message)) return message;
  const allowed = fields.message?.[message.role as keyof NonNullable<StrictFields['message']>];
  const out = allowed ? pick(message, allowed) : { ...message };
  const length = fields.toolCallIdLength;
  if (length) {
    if (typeof out.tool_call_id === 'string') out.tool_call_id = toolCallId(out.tool_call_id, length);
    if (Array.isArray(out.tool_calls)) {
      out.tool_calls = out.tool_calls.map((call) =>
        isObject(call) && typeof call.id === 'string' ? { ...call, id: toolCallId(call.id, length) } : call,
      );
    }
  }
  return out;
}

/**
 * An id of `length` letters and digits: the id itself when it already is one, else one derived from
 * it, so a call and its result (sent in the same history) still match.
 */
export function toolCallId(id: string, length: number): string {
  if (id.length === length && /^[A-Za-z0-9]+$/.test(id)) return id;
  return createHash('sha256')
    .update(id)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, length);
}

function pick(object: Json, names: readonly string[]): Json {
  const allowed = new Set(names);
  return Object.fromEntries(Object.entries(object).filter(([name]) => allowed.has(name)));
}

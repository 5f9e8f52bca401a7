import type { Endpoint, StrictFields } from '../../../domain/channels/registry.ts';
import type { WireFormat } from '../../types.ts';

const ENDPOINT: Partial<Record<WireFormat, Endpoint>> = {
  'openai-chat': 'chat',
  'openai-embeddings': 'embeddings',
};

/**
 * A JSON body trimmed to the fields a strict upstream accepts (registry `strictFields`): OpenAI's
 * spellings renamed to the upstream's first (unless the body already has the upstream's), then every
 * other top-level field left out. Bodies of endpoints without a list, and non-JSON bodies, pass as they are.
 */
export function keepStrictFields(fields: StrictFields, format: WireFormat, body: string): string {
  const endpoint = ENDPOINT[format];
  const keep = endpoint ? fields.keep[endpoint] : undefined;
  if (!keep) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return body;
  const source = parsed as Record<string, unknown>;
  const renamed: Record<string, unknown> = { ...source };
  for (const [from, to] of Object.entries(fields.rename ?? {})) {
    if (from in renamed) {
      if (!(to in source)) renamed[to] = renamed[from];
      delete renamed[from];
    }
  }
  if (endpoint === 'chat' && Array.isArray(renamed.messages)) renamed.messages = renamed.messages.map(withoutHubFields);
  const allowed = new Set(keep);
  return JSON.stringify(Object.fromEntries(Object.entries(renamed).filter(([name]) => allowed.has(name))));
}

/** The hub's own message fields (thinking carried over from Claude or Gemini) are not OpenAI's: a strict upstream refuses them. */
function withoutHubFields(message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const { reasoning_content: _text, reasoning_signature: _signature, ...rest } = message as Record<string, unknown>;
  return rest;
}

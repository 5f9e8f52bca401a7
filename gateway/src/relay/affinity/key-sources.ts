import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isObject, type JsonPath, MISSING, read } from '../overrides/json-path.ts';
import type { KeySource } from './rules.ts';

/** What a key source reads: the client's body (JSON object, or multipart fields) and headers. */
export interface KeyInput {
  body: Record<string, unknown> | FormData;
  headers: IncomingHttpHeaders;
}

/** The affinity value a source finds in the request, trimmed; undefined when it finds none. */
export function extractKey(source: KeySource, input: KeyInput): string | undefined {
  switch (source.kind) {
    case 'body': {
      if (input.body instanceof FormData) return undefined;
      const value = read(input.body, source.path);
      return nestedOrText(value, source.nested);
    }
    case 'header': {
      const raw = input.headers[source.name];
      const value = Array.isArray(raw) ? raw[0] : raw;
      if (typeof value !== 'string') return undefined;
      return nestedOrText(value, source.nested);
    }
    case 'claude_cache_prefix':
      return input.body instanceof FormData ? undefined : claudeCachePrefix(input.body);
  }
}

/** A scalar as text, an object or array as its JSON; with `nested`, read inside (a JSON string is parsed first). */
function nestedOrText(value: unknown, nested: JsonPath | undefined): string | undefined {
  if (value === MISSING || value === null || value === undefined) return undefined;
  if (nested) {
    let container = value;
    if (typeof value === 'string') {
      try {
        container = JSON.parse(value);
      } catch {
        return undefined;
      }
    }
    return nestedOrText(read(container, nested), undefined);
  }
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * A stable hash of a Claude Messages request up to and including its first `cache_control` block
 * (tools, then system, then the messages' content blocks, in the order Anthropic caches them): the
 * prefix the upstream's prompt cache matches first. Clients such as Claude Code move their last
 * breakpoint forward every turn, while the first (after system and tools) stays put, so this key
 * keeps one conversation on one channel. Undefined without a breakpoint.
 */
export function claudeCachePrefix(body: Record<string, unknown>): string | undefined {
  const parts: unknown[] = [];
  let found = false;
  /** `block` is where a breakpoint would be: the part itself, or the content block it wraps. */
  const add = (part: unknown, block: unknown = part) => {
    if (found) return;
    parts.push(part);
    found = isObject(block) && block.cache_control !== undefined && block.cache_control !== null;
  };
  if (Array.isArray(body.tools)) for (const tool of body.tools) add(tool);
  if (typeof body.system === 'string') add({ system: body.system });
  else if (Array.isArray(body.system)) for (const block of body.system) add(block);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isObject(message)) continue;
      const role = message.role;
      if (typeof message.content === 'string') add({ role, text: message.content });
      else if (Array.isArray(message.content)) for (const block of message.content) add({ role, block }, block);
    }
  }
  if (!found) return undefined;
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

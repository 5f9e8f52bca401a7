import { channelRuleError, type RelayRuleError } from '../routing/errors.ts';
import { compileGoRegExp, testBounded } from './go-regexp.ts';
import type { HeaderValues } from './param-override.ts';

/**
 * A channel's header_override (reference §4.6), applied to the upstream request headers after the
 * adaptor has set its own, so it can replace Authorization and the like; `Host` sets the request
 * host. Keys are header names (case-insensitive) with values that may hold:
 * - `{api_key}`: the key picked for this attempt;
 * - `{client_header:Name}` as the whole value: the client's header (skipped when the client sent
 *   none, and when there is no client, e.g. channel tests). Anywhere else it is refused.
 *
 * Pass-through rules (the value is ignored): `*` copies every client header, `re:<regex>` /
 * `regex:<regex>` those whose name matches (case-insensitively: new-api lower-cases the pattern
 * but matches canonical names, so `re:^X-` never matched there). Never passed: hop-by-hop headers
 * and those named in Connection, cookie, host, content-length, content-encoding, accept-encoding, the client's
 * credentials (authorization, x-api-key, x-goog-api-key, mj-api-secret), expect (undici refuses
 * it) and the WebSocket handshake. Pass-through runs first, so explicit entries win.
 */

export interface HeaderOverrideInput {
  /** The channel key picked for this attempt. */
  apiKey: string;
  /** The client's headers, lower-case names; undefined when there is no client request. */
  clientHeaders?: HeaderValues | undefined;
}

const NEVER_PASSED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'cookie',
  'host',
  'content-length',
  // The relay sends a body of its own serialisation, never compressed.
  'content-encoding',
  'accept-encoding',
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'mj-api-secret',
  'expect',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'sec-websocket-accept',
]);

const STATIC = 0;
const WITH_API_KEY = 1;
const CLIENT_HEADER = 2;

interface Entry {
  name: string;
  kind: typeof STATIC | typeof WITH_API_KEY | typeof CLIENT_HEADER;
  /** The value, or for CLIENT_HEADER the client header's lower-case name. */
  value: string;
}

interface Compiled {
  passAll: boolean;
  patterns: readonly RegExp[];
  entries: readonly Entry[];
  error?: RelayRuleError;
}

const compiledCache = new WeakMap<object, Compiled>();

/**
 * Applies the override to `headers` (the adaptor's headers for this attempt, modified in place;
 * names written lower-case, replacing any other spelling). Answers an error for a setting that
 * cannot be used (`channel:header_override_invalid`), leaving `headers` untouched.
 */
export function applyHeaderOverride(
  headers: Record<string, string>,
  override: Readonly<Record<string, unknown>> | undefined,
  input: HeaderOverrideInput,
): RelayRuleError | undefined {
  if (override === undefined) return undefined;
  const compiled = compiledOf(override);
  if (compiled.error) return compiled.error;
  const client = input.clientHeaders;
  if (client !== undefined && (compiled.passAll || compiled.patterns.length > 0)) {
    const connection = headerText(client.connection);
    const hopByHop =
      connection === ''
        ? undefined
        : new Set(
            connection
              .toLowerCase()
              .split(',')
              .map((t) => t.trim()),
          );
    for (const rawName in client) {
      const name = rawName.toLowerCase();
      if (NEVER_PASSED.has(name) || name.startsWith(':') || hopByHop?.has(name)) continue;
      if (!compiled.passAll && !compiled.patterns.some((re) => testBounded(re, name))) continue;
      const value = headerText(client[rawName]);
      if (value !== '') put(headers, name, value);
    }
  }
  for (const entry of compiled.entries) {
    let value = entry.value;
    if (entry.kind === CLIENT_HEADER) {
      if (client === undefined) continue;
      value = headerText(client[entry.value]);
    } else if (entry.kind === WITH_API_KEY) {
      // A function, so that `$` in a key is never read as a replacement pattern.
      value = value.replaceAll('{api_key}', () => input.apiKey);
    }
    if (value.trim() !== '') put(headers, entry.name, value);
  }
  return undefined;
}

/** Whether a header setting key is a pass-through rule rather than a header name. */
export function isPassThroughRule(key: string): boolean {
  const lower = key.trim().toLowerCase();
  return lower === '*' || lower.startsWith('re:') || lower.startsWith('regex:');
}

function compiledOf(override: Readonly<Record<string, unknown>>): Compiled {
  let compiled = compiledCache.get(override);
  if (!compiled) {
    try {
      compiled = compile(override);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      compiled = {
        passAll: false,
        patterns: [],
        entries: [],
        error: channelRuleError('channel:header_override_invalid', { detail }),
      };
    }
    compiledCache.set(override, compiled);
  }
  return compiled;
}

function compile(override: Readonly<Record<string, unknown>>): Compiled {
  let passAll = false;
  const patterns: RegExp[] = [];
  const entries: Entry[] = [];
  for (const [rawKey, raw] of Object.entries(override)) {
    const key = rawKey.trim();
    if (key === '') continue;
    if (isPassThroughRule(key)) {
      if (key === '*') {
        passAll = true;
        continue;
      }
      const pattern = key.slice(key.indexOf(':') + 1).trim();
      if (pattern === '') throw new Error(`pass-through rule ${key} has an empty pattern`);
      patterns.push(compileGoRegExp(pattern, 'i'));
      continue;
    }
    if (typeof raw !== 'string') throw new Error(`the value of ${key} must be a string`);
    if (/[\r\n]/.test(raw)) throw new Error(`the value of ${key} contains a line break`);
    entries.push({ name: key.toLowerCase(), ...entryValue(key, raw) });
  }
  return { passAll, patterns, entries };
}

const CLIENT_PREFIX = '{client_header:';

function entryValue(key: string, raw: string): Pick<Entry, 'kind' | 'value'> {
  const trimmed = raw.trim();
  if (trimmed.startsWith(CLIENT_PREFIX)) {
    const rest = trimmed.slice(CLIENT_PREFIX.length);
    const end = rest.indexOf('}');
    if (end !== rest.length - 1) throw new Error(`${key}: {client_header:…} must be the whole value`);
    const name = rest.slice(0, end).trim().toLowerCase();
    if (name === '') throw new Error(`${key}: {client_header:} names no header`);
    return { kind: CLIENT_HEADER, value: name };
  }
  // new-api would send the placeholder text itself; that is never what was meant.
  if (trimmed.includes(CLIENT_PREFIX)) throw new Error(`${key}: {client_header:…} must be the whole value`);
  return { kind: raw.includes('{api_key}') ? WITH_API_KEY : STATIC, value: raw };
}

/** Sets a header, removing other spellings of its name first so that only one value goes out. */
function put(headers: Record<string, string>, name: string, value: string): void {
  for (const key in headers) {
    if (key !== name && key.length === name.length && key.toLowerCase() === name) delete headers[key];
  }
  headers[name] = value;
}

function headerText(value: string | string[] | undefined): string {
  if (value === undefined) return '';
  return (typeof value === 'string' ? value : value.join(', ')).trim();
}

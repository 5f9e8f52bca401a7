import type { ChannelSnapshot } from '../types.ts';

/** Fields of a JSON key (Google service account and the like) that are public by design: not masked. */
const PUBLIC_JSON_FIELDS = new Set([
  'type',
  'project_id',
  'auth_uri',
  'token_uri',
  'auth_provider_x509_cert_url',
  'client_x509_cert_url',
  'universe_domain',
  'region',
]);

/** Names of settings and overrides whose values are credentials. */
const SECRET_NAME = /key|secret|token|password|passwd|credential|authorization|signature/i;

/**
 * What of a channel must never reach a user: each key whole and in its parts (`AK|SK`, `appId|secret`,
 * the string fields of a JSON key, the lines of a PEM private key), header override values, the base URL's
 * user and password, and credential-named values in its settings and parameter overrides.
 */
export function channelSecrets(channel: ChannelSnapshot): string[] {
  const secrets: string[] = [];
  for (const key of channel.keys) secrets.push(...keyParts(key));
  for (const value of Object.values(channel.headerOverride ?? {})) {
    if (typeof value === 'string') secrets.push(value, ...value.split(/\s+/));
  }
  secrets.push(...userInfo(channel.baseUrl));
  for (const source of [channel.setting, channel.settings, channel.paramOverride]) {
    if (source) collectNamed(source, secrets, 0);
  }
  return secrets;
}

/** A key and its parts: a JSON key by its non-public string fields only (its field names are ordinary words). */
export function keyParts(key: string): string[] {
  const json = parseObject(key);
  if (json) {
    const parts: string[] = [];
    for (const [field, value] of Object.entries(json)) {
      if (typeof value === 'string' && !PUBLIC_JSON_FIELDS.has(field)) parts.push(...textParts(value));
    }
    return parts;
  }
  return textParts(key);
}

/** A value whole, its `|`-separated parts, and its lines and words (a PEM key's base64 lines, escaped or not). */
function textParts(value: string): string[] {
  const unescaped = value.replace(/\\n/g, '\n');
  return [value, unescaped, ...value.split('|'), ...unescaped.split(/\s+/)];
}

function userInfo(baseUrl: string): string[] {
  try {
    const url = new URL(baseUrl);
    return [url.username, url.password, decode(url.username), decode(url.password)];
  } catch {
    return [];
  }
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function collectNamed(value: unknown, into: string[], depth: number): void {
  if (typeof value !== 'object' || value === null || depth > 8) return;
  for (const [name, item] of Object.entries(value)) {
    if (typeof item === 'string' && SECRET_NAME.test(name)) into.push(...textParts(item));
    else collectNamed(item, into, depth + 1);
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

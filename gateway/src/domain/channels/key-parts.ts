/** Fields of a JSON key (a Google service account and the like) that are public by design: not secrets. */
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

/**
 * A channel key as the pieces an upstream may quote: the key whole, its `|`-separated parts (`AK|SK`,
 * `appId|secret`), its lines and words (a PEM private key's base64 lines, newlines escaped or not); a JSON
 * key by its non-public string fields only, since its field names and punctuation are ordinary text.
 */
export function keyParts(key: string): string[] {
  const json = parseObject(key);
  if (!json) return textParts(key);
  const parts: string[] = [];
  for (const [field, value] of Object.entries(json)) {
    if (typeof value === 'string' && !PUBLIC_JSON_FIELDS.has(field)) parts.push(...textParts(value));
  }
  return parts;
}

/** A value whole, its `|`-separated parts, and its lines and words. */
export function textParts(value: string): string[] {
  const unescaped = value.replace(/\\n/g, '\n');
  return [value, unescaped, ...value.split('|'), ...unescaped.split(/\s+/)];
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

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

/**
 * A value whole and its `|`-separated parts; a value with spaces or lines (`Bearer <token>`, a PEM key, its
 * newlines escaped or not) by its words only, so that the words around a credential stay readable.
 */
export function textParts(value: string): string[] {
  const words = value.replace(/\\n/g, '\n').split(/\s+/);
  const pieces = words.length > 1 ? words : [value];
  return pieces.flatMap((piece) => [piece, ...piece.split('|')]);
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

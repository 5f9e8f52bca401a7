/**
 * The kind of client behind a relay request, told from its User-Agent, for the upstream detection
 * view (`GET /api/channel/test_upstream/:id`). The answer is one of a small fixed set, never the raw
 * header: it is stored per (channel, group, client type), so its values must stay few.
 */
export const CLIENT_TYPES = [
  'claude-code',
  'codex',
  'openai-python',
  'openai-node',
  'anthropic-python',
  'anthropic-node',
  'google-genai',
  'curl',
  'python-requests',
  'browser',
  'other',
  'unknown',
] as const;

export type ClientType = (typeof CLIENT_TYPES)[number];

/** Only the start of a header is read: every marker below sits near the front of a real User-Agent. */
const SCAN_CHARS = 512;

/**
 * Markers in order: the first that matches wins. CLI tools come before SDKs because they are built on
 * them and may name both; browsers come last because embedded clients often start with `Mozilla/`.
 */
const RULES: ReadonlyArray<readonly [ClientType, (ua: string) => boolean]> = [
  ['claude-code', (ua) => ua.startsWith('claude-cli/') || ua.includes('claude-code')],
  ['codex', (ua) => ua.startsWith('codex')],
  // "OpenAI/Python 1.x" and "AsyncOpenAI/Python 1.x".
  ['openai-python', (ua) => ua.includes('openai/python')],
  ['openai-node', (ua) => ua.includes('openai/js')],
  ['anthropic-python', (ua) => ua.includes('anthropic/python')],
  ['anthropic-node', (ua) => ua.includes('anthropic/js')],
  [
    'google-genai',
    (ua) =>
      ua.includes('google-genai-sdk/') ||
      ua.includes('google-api-nodejs-client/') ||
      ua.includes('gl-node/') ||
      ua.includes('gl-python/'),
  ],
  ['curl', (ua) => ua.startsWith('curl/')],
  ['python-requests', (ua) => ua.startsWith('python-requests/')],
  ['browser', (ua) => ua.startsWith('mozilla/')],
];

/** The client type of a request's User-Agent header; `unknown` when it is missing or blank. */
export function clientType(userAgent: string | readonly string[] | undefined): ClientType {
  const raw = Array.isArray(userAgent) ? userAgent[0] : userAgent;
  if (typeof raw !== 'string') return 'unknown';
  const ua = raw.slice(0, SCAN_CHARS).trim().toLowerCase();
  if (ua === '') return 'unknown';
  for (const [type, matches] of RULES) if (matches(ua)) return type;
  return 'other';
}

import { createPrivateKey } from 'node:crypto';

/** The fields of a Google service-account key file that signing a token request needs. */
export interface ServiceAccount {
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  token_uri: string;
}

const FIELDS = ['project_id', 'private_key_id', 'private_key', 'client_email', 'token_uri'] as const;

/**
 * A channel key holding a service-account JSON (the file Google's console downloads), or why it is
 * not one: not JSON, not of type "service_account", a field missing, a private key that is no PEM key.
 */
export function parseServiceAccount(text: string): { account: ServiceAccount } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'the key is not valid JSON (a service-account key file is expected)' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: 'the key is not a JSON object (a service-account key file is expected)' };
  }
  const json = value as Record<string, unknown>;
  if (json.type !== 'service_account') return { problem: 'the key\'s "type" is not "service_account"' };
  const missing = FIELDS.filter((field) => typeof json[field] !== 'string' || (json[field] as string).trim() === '');
  if (missing.length > 0) return { problem: `the key has no ${missing.join(', ')}` };
  const account = Object.fromEntries(
    FIELDS.map((field) => [field, (json[field] as string).trim()]),
  ) as unknown as ServiceAccount;
  // Files pasted through some tools keep the PEM's newlines escaped.
  account.private_key = account.private_key.replace(/\\n/g, '\n');
  try {
    createPrivateKey(account.private_key);
  } catch {
    return { problem: "the key's private_key is not a PEM private key" };
  }
  if (!/^https?:\/\//.test(account.token_uri)) return { problem: "the key's token_uri is not an http(s) URL" };
  return { account };
}

/** What a Google Cloud channel key is: a service account's key file, or an API key (Vertex AI express mode). */
export type GoogleCredentials = { account: ServiceAccount } | { apiKey: string };

/** Google API keys are one word of letters, digits, `-`, `_` and `.` (AIza…, or AQ.… for keys bound to a service account). */
const API_KEY = /^[A-Za-z0-9._-]{20,}$/;

/** A key that is JSON is a service-account file; any other must look like an API key. */
export function parseGoogleCredentials(text: string): GoogleCredentials | { problem: string } {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return parseServiceAccount(trimmed);
  if (API_KEY.test(trimmed)) return { apiKey: trimmed };
  return { problem: 'the key is neither a service-account JSON nor an API key' };
}

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
    return { problem: 'the key is not JSON (a service-account key file is expected)' };
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

import { keyParts, textParts } from '../../domain/channels/key-parts.ts';
import type { ChannelSnapshot } from '../types.ts';

/** Names of settings and overrides whose values are credentials. */
const SECRET_NAME = /key|secret|token|password|passwd|credential|authorization|signature/i;

/**
 * What of a channel must never reach a user: each key whole and in its parts (domain/channels/key-parts.ts),
 * header override values, the base URL's user and password, and credential-named values in its settings
 * and parameter overrides.
 */
export function channelSecrets(channel: ChannelSnapshot): string[] {
  const secrets: string[] = [];
  for (const key of channel.keys) secrets.push(...keyParts(key));
  for (const value of Object.values(channel.headerOverride ?? {})) {
    if (typeof value === 'string') secrets.push(...textParts(value));
  }
  secrets.push(...userInfo(channel.baseUrl));
  for (const source of [channel.setting, channel.settings, channel.paramOverride]) {
    if (source) collectNamed(source, secrets, 0);
  }
  return secrets;
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

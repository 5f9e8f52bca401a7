import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const KEY_LENGTH = 48;
export const KEY_PREFIX = 'sk-';

/** `length` characters from [0-9a-zA-Z], each drawn uniformly from the CSPRNG. */
export function randomAlphanumeric(length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += ALPHABET[randomInt(ALPHABET.length)];
  return text;
}

/** A new API key, without the `sk-` it is shown with (reference §3.1). */
export function generateKey(): string {
  return randomAlphanumeric(KEY_LENGTH);
}

/**
 * The stored key in what a user pastes: with or without `sk-`, and without the `-<channelId>` suffix
 * an administrator may append to pin a channel.
 */
export function bareKey(text: string): string {
  const trimmed = text.trim();
  const withoutPrefix = trimmed.startsWith(KEY_PREFIX) ? trimmed.slice(KEY_PREFIX.length) : trimmed;
  return withoutPrefix.split('-')[0] ?? '';
}

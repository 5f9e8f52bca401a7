import { randomInt } from 'node:crypto';

export const BACKUP_CODE_COUNT = 10;
/** No 0/O or 1/I/L: codes are read off paper and typed by hand. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/**
 * One-time recovery codes of 8 characters (40 bits each; new-api's login form takes exactly 8): shown
 * once, stored only as digests.
 */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    let raw = '';
    for (let i = 0; i < 8; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
    codes.add(raw);
  }
  return [...codes];
}

/** The form a code is digested in: case, spaces and dashes as typed do not matter. */
export function normalizeBackupCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/** Whether the text could be a backup code at all (anything else is not looked up). */
export function looksLikeBackupCode(code: string): boolean {
  return /^[A-Z0-9]{8}$/.test(normalizeBackupCode(code));
}

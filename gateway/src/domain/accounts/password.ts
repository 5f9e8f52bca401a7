import bcrypt from 'bcryptjs';

/** bcrypt, so accounts imported from new-api keep working; cost 10 is its default there too. */
const COST = 10;
/** bcrypt ignores everything past 72 bytes; refuse such passwords rather than silently truncate. */
export const PASSWORD_MAX_BYTES = 72;

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

import { AppError } from '../../errors.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import { PASSWORD_MAX_BYTES } from './password.ts';

/** Account rules shared by registration, user management and self-service (spec doc 1 §5, §9). */
export const USERNAME_MAX_LENGTH = 12;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 20;
export const DISPLAY_NAME_MAX_LENGTH = 20;

export const ROLE = { guest: 0, user: 1, admin: 10, root: 100 } as const;
export const USER_STATUS = { enabled: 1, disabled: 2 } as const;

const length = (text: string) => [...text].length;

export function checkUsername(username: string): string {
  const trimmed = username.trim();
  if (trimmed === '') throw new AppError(ACCOUNT_ERRORS.USERNAME_AND_PASSWORD_REQUIRED);
  if (length(trimmed) > USERNAME_MAX_LENGTH) {
    throw new AppError(ACCOUNT_ERRORS.USERNAME_TOO_LONG, { max: USERNAME_MAX_LENGTH });
  }
  return trimmed;
}

export function checkPassword(password: string): string {
  const n = length(password);
  if (n < PASSWORD_MIN_LENGTH || n > PASSWORD_MAX_LENGTH || Buffer.byteLength(password) > PASSWORD_MAX_BYTES) {
    throw new AppError(ACCOUNT_ERRORS.PASSWORD_LENGTH, { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH });
  }
  return password;
}

export function checkDisplayName(displayName: string, fallback: string): string {
  const trimmed = displayName.trim();
  return trimmed === '' ? fallback : [...trimmed].slice(0, DISPLAY_NAME_MAX_LENGTH).join('');
}

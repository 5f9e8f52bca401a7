import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { channelType, type KeyFormat, typeLabel } from './registry.ts';
import { parseGoogleCredentials } from './service-account.ts';

/**
 * Refuses keys that cannot work for the type, so a malformed key is caught when the channel is saved
 * rather than on a user's request: a Google Cloud type needs each key to be a service-account JSON file
 * or an API key, and a composite key (`AppId|SecretId|SecretKey`) needs every one of its parts.
 */
export function checkChannelKeys(type: number, keys: readonly string[]): void {
  const format = channelType(type)?.key;
  if (!format) return;
  keys.forEach((key, index) => {
    const problem = keyProblem(format, key);
    if (problem) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_KEY_INVALID, { type: typeLabel(type), key: index + 1, problem });
    }
  });
}

function keyProblem(format: KeyFormat, key: string): string | undefined {
  if (format.kind === 'google-credentials') {
    const parsed = parseGoogleCredentials(key);
    return 'problem' in parsed ? parsed.problem : undefined;
  }
  if (!format.separator || !format.parts) return undefined;
  const parts = key.split(format.separator).map((part) => part.trim());
  const fits = (expected: readonly string[] | undefined) =>
    expected !== undefined && parts.length === expected.length && parts.every((part) => part !== '');
  return fits(format.parts) || fits(format.alternative) ? undefined : `it must be ${format.hint}`;
}

import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { channelType, typeLabel } from './registry.ts';
import { parseGoogleCredentials } from './service-account.ts';

/**
 * Refuses keys that cannot work for the type, so a malformed key is caught when the channel is saved
 * rather than on a user's request: a Google Cloud type needs each key to be a service-account JSON file
 * or an API key.
 */
export function checkChannelKeys(type: number, keys: readonly string[]): void {
  if (channelType(type)?.key.kind !== 'google-credentials') return;
  keys.forEach((key, index) => {
    const parsed = parseGoogleCredentials(key);
    if ('problem' in parsed) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_KEY_INVALID, {
        type: typeLabel(type),
        key: index + 1,
        problem: parsed.problem,
      });
    }
  });
}

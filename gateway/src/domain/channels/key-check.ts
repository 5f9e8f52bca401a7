import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { channelType, typeLabel } from './registry.ts';
import { parseServiceAccount } from './service-account.ts';

/**
 * Refuses keys that cannot work for the type, so a malformed key is caught when the channel is saved
 * rather than on a user's request: a service-account type needs every key to be such a JSON file.
 */
export function checkChannelKeys(type: number, keys: readonly string[]): void {
  if (channelType(type)?.key.kind !== 'service-account') return;
  keys.forEach((key, index) => {
    const parsed = parseServiceAccount(key);
    if ('problem' in parsed) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_KEY_INVALID, {
        type: typeLabel(type),
        key: index + 1,
        problem: parsed.problem,
      });
    }
  });
}

import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { channelType, type KeyFormat, typeLabel } from './registry.ts';

/**
 * Refuses keys that cannot work for the type, so a malformed key is caught when the channel is saved
 * rather than on a user's request: a composite key (`APIKey|SecretKey`…) needs its separator and no
 * empty part. Fewer parts than the format names are allowed (Bedrock also takes `APIKey|Region`); the
 * protocol checks the exact form it needs when it sends.
 */
export function checkChannelKeys(type: number, keys: readonly string[]): void {
  const format = channelType(type)?.key;
  if (!format?.separator || !format.parts) return;
  keys.forEach((key, index) => {
    const problem = compositeKeyProblem(key, format);
    if (problem)
      throw new AppError(CHANNEL_ERRORS.CHANNEL_KEY_INVALID, { type: typeLabel(type), key: index + 1, problem });
  });
}

function compositeKeyProblem(key: string, format: KeyFormat): string | undefined {
  const parts = key.split(format.separator ?? '|');
  const expected = `expected ${format.hint}`;
  if (parts.length < 2) return `no "${format.separator}" in it, ${expected}`;
  if (parts.length > (format.parts?.length ?? 0)) return `${parts.length} parts, ${expected}`;
  if (parts.some((part) => part.trim() === '')) return `an empty part, ${expected}`;
  return undefined;
}

import { channelType, typeLabel } from '../../domain/channels/registry.ts';
import { AppError, defineErrors } from '../../errors.ts';

const KEY_ERRORS = defineErrors({
  'channel:key_malformed': {
    status: 401,
    message: {
      zh: '{type} 的渠道密钥格式应为 {format}',
      en: 'The channel key of {type} must be {format}',
    },
  },
});

/**
 * A composite channel key (`AppId|SecretId|SecretKey`) split into the registry's named parts. A key
 * missing a part, or with an empty one, is refused saying the expected format: the upstream would only
 * answer with a signature error that hides the cause.
 */
export function keyParts(type: number, key: string): string[] {
  const format = channelType(type)?.key;
  if (!format?.separator || !format.parts) return [key];
  const parts = key.trim().split(format.separator);
  if (parts.length !== format.parts.length || parts.some((part) => part.trim() === '')) {
    throw new AppError(KEY_ERRORS['channel:key_malformed'], { type: typeLabel(type), format: format.hint });
  }
  return parts.map((part) => part.trim());
}

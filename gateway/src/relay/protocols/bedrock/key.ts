import { AppError, defineErrors } from '../../../errors.ts';
import type { AwsCredentials } from './sigv4.ts';

/** How a Bedrock channel key authenticates: an IAM access key pair (SigV4), or a Bedrock API key (Bearer). */
export type BedrockKey =
  | { kind: 'sigv4'; credentials: AwsCredentials; region: string }
  | { kind: 'api-key'; apiKey: string; region: string };

export const BEDROCK_KEY_ERRORS = defineErrors({
  'channel:key_malformed': {
    status: 401,
    message: {
      zh: 'AWS 渠道密钥格式应为 AccessKey|SecretAccessKey|Region 或 APIKey|Region：{detail}',
      en: 'An AWS channel key is AccessKey|SecretAccessKey|Region or APIKey|Region: {detail}',
    },
  },
});

/** An AWS region name: us-east-1, eu-central-2, ap-southeast-1, us-gov-west-1 … */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/**
 * Reads a channel key: `AccessKey|SecretAccessKey|Region` (new-api's form, signed with SigV4) or
 * `APIKey|Region` (a Bedrock API key, sent as a Bearer token). Anything else is refused with a
 * stable code before any request is made.
 */
export function parseBedrockKey(key: string): BedrockKey {
  const parts = key.split('|').map((part) => part.trim());
  const refuse = (detail: string) => new AppError(BEDROCK_KEY_ERRORS['channel:key_malformed'], { detail });
  if (parts.length !== 2 && parts.length !== 3) throw refuse(`${parts.length} part(s) separated by '|'`);
  if (parts.some((part) => part === '')) throw refuse('a part is empty');
  const region = parts[parts.length - 1] as string;
  if (!REGION.test(region)) throw refuse(`"${region}" is not an AWS region`);
  if (parts.length === 2) return { kind: 'api-key', apiKey: parts[0] as string, region };
  return {
    kind: 'sigv4',
    credentials: { accessKeyId: parts[0] as string, secretAccessKey: parts[1] as string },
    region,
  };
}

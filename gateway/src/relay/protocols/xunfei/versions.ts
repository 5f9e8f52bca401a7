import { AppError, defineErrors } from '../../../errors.ts';

const SPARK_ERRORS = defineErrors({
  'channel:spark_version_unknown': {
    status: 400,
    message: {
      zh: '未知的星火版本 {version}，可用：{known}',
      en: 'Unknown Spark API version {version}; known: {known}',
    },
  },
});

/** Where each Spark version is served and the `domain` its requests name (Xunfei's WebSocket API docs). */
const SPARK_VERSIONS: Readonly<Record<string, { path: string; domain: string }>> = {
  'v1.1': { path: '/v1.1/chat', domain: 'lite' },
  'v2.1': { path: '/v2.1/chat', domain: 'generalv2' },
  'v3.1': { path: '/v3.1/chat', domain: 'generalv3' },
  'v3.5': { path: '/v3.5/chat', domain: 'generalv3.5' },
  'v4.0': { path: '/v4.0/chat', domain: '4.0Ultra' },
  'pro-128k': { path: '/chat/pro-128k', domain: 'pro-128k' },
  'max-32k': { path: '/chat/max-32k', domain: 'max-32k' },
};

export const DEFAULT_SPARK_VERSION = 'v2.1';

/**
 * The Spark version a request goes to: the channel's `other`, else the model's suffix
 * (`SparkDesk-v3.5`), else v2.1 (spec doc 2 §5).
 */
export function sparkVersion(other: string, model: string): { version: string; path: string; domain: string } {
  const version =
    other.trim() || /-(v\d\.\d|pro-128k|max-32k)$/i.exec(model)?.[1]?.toLowerCase() || DEFAULT_SPARK_VERSION;
  const served = SPARK_VERSIONS[version];
  if (!served) {
    throw new AppError(SPARK_ERRORS['channel:spark_version_unknown'], {
      version,
      known: Object.keys(SPARK_VERSIONS).join(', '),
    });
  }
  return { version, ...served };
}

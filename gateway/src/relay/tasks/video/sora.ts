import type { TaskRow } from '../../../store/repositories/tasks.ts';
import type { ChannelSnapshot } from '../../types.ts';

/** Clip lengths and frame sizes OpenAI's Videos API accepts (its own validation, checked before billing). */
export const SORA_SECONDS = ['4', '8', '12'] as const;
export const SORA_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'] as const;
const DEFAULT_SECONDS = '4';
const DEFAULT_SIZE = '720x1280';
/** The large frames cost more (new-api's size ratio for Sora). */
const LARGE_SIZE_RATIO = 1.666667;

export interface SoraParams {
  seconds: string;
  size: string;
}

/** The submission's clip length and size, defaulted as OpenAI does; an error message when they are not OpenAI's. */
export function soraParams(seconds: unknown, size: unknown): SoraParams | string {
  const s = seconds === undefined || seconds === null || seconds === '' ? DEFAULT_SECONDS : String(seconds);
  const z = size === undefined || size === null || size === '' ? DEFAULT_SIZE : String(size);
  if (!(SORA_SECONDS as readonly string[]).includes(s)) return `seconds must be one of ${SORA_SECONDS.join(', ')}`;
  if (!(SORA_SIZES as readonly string[]).includes(z)) return `size must be one of ${SORA_SIZES.join(', ')}`;
  return { seconds: s, size: z };
}

/** The task's own ratios (reference §9.2 "other ratios"): the seconds, and the size for the large frames. */
export function soraRatios(params: SoraParams): { seconds: number; size: number } {
  const large = params.size === '1024x1792' || params.size === '1792x1024';
  return { seconds: Number(params.seconds), size: large ? LARGE_SIZE_RATIO : 1 };
}

/** `{base}/v1{path}` with the channel key as a Bearer token. */
export function soraUrl(channel: Pick<ChannelSnapshot, 'baseUrl'>, path: string): string {
  return `${channel.baseUrl.replace(/\/+$/, '')}/v1${path}`;
}

const UPSTREAM_STATUS: Record<string, string> = {
  queued: 'QUEUED',
  in_progress: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
};
const VIDEO_STATUS: Record<string, string> = {
  SUBMITTED: 'queued',
  QUEUED: 'queued',
  IN_PROGRESS: 'in_progress',
  SUCCESS: 'completed',
  FAILURE: 'failed',
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An upstream video object in the gateway's statuses; undefined when it is not one. */
export function readSoraVideo(
  value: unknown,
): { id: string; status: string; progress: string; failReason: string } | undefined {
  if (!isRecord(value) || typeof value.id !== 'string' || value.id === '') return undefined;
  const status = UPSTREAM_STATUS[String(value.status)];
  if (!status) return undefined;
  const progress = typeof value.progress === 'number' ? Math.max(0, Math.min(100, Math.round(value.progress))) : 0;
  const error = isRecord(value.error) ? value.error : undefined;
  return {
    id: value.id,
    status,
    progress: `${status === 'SUCCESS' ? 100 : progress}%`,
    failReason: status === 'FAILURE' ? String(error?.message ?? 'video generation failed') : '',
  };
}

/** What a task row keeps of the submission, for the video object the client is shown. */
export interface VideoProperties {
  input: string;
  origin_model_name: string;
  upstream_model_name: string;
  seconds: string;
  size: string;
  remixed_from?: string;
}

export function videoProperties(row: Pick<TaskRow, 'properties'>): VideoProperties | undefined {
  try {
    const parsed = JSON.parse(row.properties) as unknown;
    return isRecord(parsed) ? (parsed as unknown as VideoProperties) : undefined;
  } catch {
    return undefined;
  }
}

/** A stored task as OpenAI's video object, under the public id the client was given. */
export function videoObject(row: TaskRow) {
  const props = videoProperties(row);
  const status = VIDEO_STATUS[row.status] ?? 'queued';
  return {
    id: row.task_id,
    object: 'video',
    model: props?.origin_model_name ?? '',
    status,
    progress: Number.parseInt(row.progress, 10) || 0,
    created_at: Number(row.submit_time),
    completed_at: row.status === 'SUCCESS' ? Number(row.finish_time) : null,
    expires_at: null,
    prompt: props?.input ?? '',
    seconds: props?.seconds ?? DEFAULT_SECONDS,
    size: props?.size ?? DEFAULT_SIZE,
    remixed_from_video_id: props?.remixed_from ?? null,
    error: row.status === 'FAILURE' ? { code: 'video_generation_failed', message: row.fail_reason } : null,
  };
}

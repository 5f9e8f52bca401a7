import type { TaskRow } from '../../../store/repositories/tasks.ts';

const VIDEO_STATUS: Record<string, string> = {
  SUBMITTED: 'queued',
  QUEUED: 'queued',
  IN_PROGRESS: 'in_progress',
  SUCCESS: 'completed',
  FAILURE: 'failed',
};

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
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as VideoProperties)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A stored task as OpenAI's video object, under the public id the client was given, whatever the vendor. */
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
    seconds: props?.seconds ?? '',
    size: props?.size ?? '',
    remixed_from_video_id: props?.remixed_from ?? null,
    error: row.status === 'FAILURE' ? { code: 'video_generation_failed', message: row.fail_reason } : null,
  };
}

/** The finished video's address the vendor gave (kept in the row's data); undefined for vendors that serve it themselves. */
export function videoUrl(row: Pick<TaskRow, 'data'>): string | undefined {
  try {
    const data = JSON.parse(row.data) as { url?: unknown } | null;
    return typeof data?.url === 'string' && data.url !== '' ? data.url : undefined;
  } catch {
    return undefined;
  }
}

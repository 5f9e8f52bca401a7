import type { TaskRow } from '../../../store/repositories/tasks.ts';

/** The two things a Suno API proxy is asked to make (reference §9.2; model `suno_<action>`). */
export const SUNO_ACTIONS = ['music', 'lyrics'] as const;
export type SunoAction = (typeof SUNO_ACTIONS)[number];

export const isSunoAction = (value: string): value is SunoAction => (SUNO_ACTIONS as readonly string[]).includes(value);

/** A task as the Suno proxy's fetch lists it, reduced to what the gateway keeps. */
export interface SunoUpstreamTask {
  id: string;
  status: string;
  progress: string;
  failReason: string;
  /** Clips (music) or lyrics, kept as the upstream sent them. */
  data: unknown;
}

/** The statuses a stored task takes (spec doc 3 §4); the proxy's NOT_START counts as submitted. */
const STATUSES = new Set(['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE']);
/** Progress shown when the upstream gives none. */
const DEFAULT_PROGRESS: Record<string, string> = {
  SUBMITTED: '10%',
  QUEUED: '20%',
  IN_PROGRESS: '50%',
  SUCCESS: '100%',
  FAILURE: '100%',
};

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One entry of `POST /suno/fetch`'s `data` list in the gateway's statuses; undefined for an entry
 * without id or with a status that says nothing (UNKNOWN), which leaves the stored task as it is.
 */
export function readUpstreamTask(item: unknown): SunoUpstreamTask | undefined {
  if (!isRecord(item)) return undefined;
  const id = text(item.task_id) || text(item.id);
  const raw = text(item.status).toUpperCase();
  const status = raw === 'NOT_START' ? 'SUBMITTED' : raw;
  if (!id || !STATUSES.has(status)) return undefined;
  return {
    id,
    status,
    progress: text(item.progress) || DEFAULT_PROGRESS[status] || '',
    failReason: text(item.fail_reason),
    data: item.data ?? null,
  };
}

/** The upstream's answer to a batch fetch: its tasks by upstream id. Throws when it is not the proxy's shape. */
export function readFetchAnswer(body: string): Map<string, SunoUpstreamTask> {
  const parsed = JSON.parse(body) as unknown;
  if (!isRecord(parsed) || parsed.code !== 'success' || !Array.isArray(parsed.data)) {
    throw new Error(`unexpected suno fetch answer: ${body.slice(0, 200)}`);
  }
  const tasks = new Map<string, SunoUpstreamTask>();
  for (const item of parsed.data) {
    const task = readUpstreamTask(item);
    if (task) tasks.set(task.id, task);
  }
  return tasks;
}

/** A stored task as the Suno proxy's fetch shows it, under the public id the client was given. */
export function sunoTaskView(row: TaskRow) {
  let data: unknown = null;
  try {
    data = row.data ? (JSON.parse(row.data) as unknown) : null;
  } catch {
    data = null;
  }
  return {
    task_id: row.task_id,
    action: row.action,
    status: row.status,
    fail_reason: row.fail_reason,
    submit_time: Number(row.submit_time),
    start_time: Number(row.start_time),
    finish_time: Number(row.finish_time),
    progress: row.progress,
    data,
  };
}

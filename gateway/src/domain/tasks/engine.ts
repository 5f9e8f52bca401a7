import type { ClusterState } from '../../cluster/index.ts';
import { type OnePodJob, runOnOnePod } from '../../cluster/run-on-one-pod.ts';

/** A task still running upstream, as the engine sees it whatever its platform. */
export interface TaskRecord {
  /** The row id. */
  id: number;
  /** The upstream's task id. */
  upstreamId: string;
  channelId: number;
  /**
   * The index of the channel key the task was submitted with (0 for tasks from before keys were chosen):
   * only that key's upstream account knows the task.
   */
  keyIndex: number;
  status: string;
  progress: string;
  /** Milliseconds. */
  submitTimeMs: number;
}

/** Where a batch of tasks is asked about: their channel, with the key they were submitted with. */
export interface TaskSource {
  channelId: number;
  keyIndex: number;
}

/** What the upstream says of a task now, in the platform's own statuses (spec doc 3 §4). */
export interface TaskUpdate {
  status: string;
  progress: string;
  failReason: string;
}

/**
 * One task platform (Midjourney, Suno, video): where its tasks are stored, how to ask
 * its upstream about them, and what counts as failed. The engine does the rest: one pod at a time,
 * batches per channel and key, timeouts, compare-and-set transitions and the refund of failures.
 */
export interface TaskPlatform<R extends TaskRecord = TaskRecord> {
  readonly name: string;
  /** A task not finished this long after submission fails ("upstream timeout") and is refunded. */
  readonly timeoutMs: number;
  unfinished(limit: number): Promise<R[]>;
  /**
   * The upstream's view of these tasks of one channel and key, by upstream id (tasks it does not know are
   * left out).
   */
  fetch(source: TaskSource, tasks: R[], signal: AbortSignal): Promise<Map<string, TaskUpdate & { raw: unknown }>>;
  /** Writes a non-failing change if the status is still the record's; answers whether it did. */
  advance(task: R, update: TaskUpdate & { raw: unknown }): Promise<boolean>;
  /** Moves the task to FAILURE and refunds it in one step, once across pods; answers whether this call did. */
  fail(task: R, reason: string): Promise<boolean>;
  /** Told after every transition this pod wrote (callbacks to the client). */
  transitioned?(task: R): void;
}

export interface TaskEngineConfig {
  cluster: ClusterState;
  platforms: TaskPlatform<any>[];
  /** How often unfinished tasks are polled (new-api: 15 s). */
  intervalMs: number;
  /** Unfinished tasks looked at per poll and platform. */
  batchLimit?: number;
  now?: () => number;
  logger: { warn(obj: object, msg: string): void };
  /** Takes secrets out of an upstream's failure reason before it is stored where its user reads it. */
  scrubReason: (reason: string, channelId: number) => string;
}

export const TASK_FAILURE = 'FAILURE';

/**
 * Polls every platform's unfinished tasks from one pod at a time (runOnOnePod). Every state change is
 * written with a compare-and-set on the previous status, so a pod that lost its lease mid-poll and the
 * one that took over never both write (or refund) the same transition.
 */
export function startTaskEngine(config: TaskEngineConfig): OnePodJob {
  const now = config.now ?? Date.now;
  const limit = config.batchLimit ?? 500;
  return runOnOnePod(
    config.cluster,
    {
      name: 'task-polling',
      intervalMs: config.intervalMs,
      ttlMs: Math.max(config.intervalMs * 3, 3000),
      onError: (err) => config.logger.warn({ err }, 'task polling failed'),
    },
    async (signal) => {
      for (const platform of config.platforms) {
        if (signal.aborted) return;
        await pollPlatform(platform, limit, now, signal, config.logger, config.scrubReason);
      }
    },
  );
}

export async function pollPlatform<R extends TaskRecord>(
  platform: TaskPlatform<R>,
  limit: number,
  now: () => number,
  signal: AbortSignal,
  logger: TaskEngineConfig['logger'],
  scrubReason: TaskEngineConfig['scrubReason'],
): Promise<void> {
  const tasks = await platform.unfinished(limit);
  // One batch per channel and key: each key is its own upstream account, which knows only its own tasks.
  const batches = new Map<string, { source: TaskSource; tasks: R[] }>();
  for (const task of tasks) {
    if (now() - task.submitTimeMs > platform.timeoutMs && task.progress !== '100%') {
      if (await platform.fail(task, 'upstream timeout')) platform.transitioned?.(task);
      continue;
    }
    // Without the upstream's id there is nothing to ask about; such a task ends by the timeout above.
    if (task.upstreamId === '') continue;
    const id = `${task.channelId}:${task.keyIndex}`;
    const batch = batches.get(id) ?? { source: { channelId: task.channelId, keyIndex: task.keyIndex }, tasks: [] };
    batch.tasks.push(task);
    batches.set(id, batch);
  }
  for (const { source, tasks: batch } of batches.values()) {
    if (signal.aborted) return;
    let states: Awaited<ReturnType<TaskPlatform<R>['fetch']>>;
    try {
      states = await platform.fetch(source, batch, signal);
    } catch (err) {
      // One channel's (or key's) outage must not hold up the others; its tasks time out if it never answers.
      logger.warn({ err, platform: platform.name, ...source }, 'task status fetch failed');
      continue;
    }
    for (const task of batch) {
      const update = states.get(task.upstreamId);
      if (!update || signal.aborted) continue;
      const wrote =
        update.status === TASK_FAILURE
          ? await platform.fail(task, scrubReason(update.failReason || 'task failed upstream', task.channelId))
          : await platform.advance(task, update);
      if (wrote && (update.status !== task.status || update.progress !== task.progress)) {
        platform.transitioned?.(task);
      }
    }
  }
}

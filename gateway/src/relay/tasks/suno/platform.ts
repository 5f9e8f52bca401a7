import type { Kysely } from 'kysely';
import type { TaskPlatform, TaskRecord, TaskUpdate } from '../../../domain/tasks/index.ts';
import type { Database } from '../../../store/database.ts';
import {
  failTaskAndRefund,
  taskBillingContext,
  unfinishedTasks,
  updateTaskIf,
} from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { sunoRequest } from '../../protocols/suno/index.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import { pollChannel } from '../poll-channel.ts';
import { readFetchAnswer, type SunoUpstreamTask } from './wire.ts';

export const SUNO_PLATFORM = 'suno';

export interface SunoTaskRecord extends TaskRecord {
  row: TaskRow;
}

export interface SunoPlatformDeps {
  db: Kysely<Database>;
  routing: RoutingIndex;
  transport: Transport;
  timeoutMs: number;
  now?: () => number;
}

const record = (row: TaskRow): SunoTaskRecord => {
  const context = taskBillingContext(row);
  return {
    id: row.id,
    upstreamId: context?.upstream_task_id ?? '',
    channelId: row.channel_id,
    keyIndex: context?.key_index ?? 0,
    status: row.status,
    progress: row.progress,
    submitTimeMs: Number(row.submit_time) * 1000,
    row,
  };
};

/**
 * Suno on the task engine: `tasks` rows of platform `suno`, polled with one `POST /suno/fetch` per channel
 * and key (each key is its own Suno account).
 */
export function sunoPlatform(deps: SunoPlatformDeps): TaskPlatform<SunoTaskRecord> {
  const { db } = deps;
  const seconds = () => Math.floor((deps.now ?? Date.now)() / 1000);
  return {
    name: SUNO_PLATFORM,
    timeoutMs: deps.timeoutMs,
    unfinished: async (limit) => (await unfinishedTasks(db, SUNO_PLATFORM, limit)).map(record),

    async fetch(source, tasks, signal) {
      const { channel, key } = pollChannel(deps.routing, source, 'suno');
      const request = sunoRequest(channel, key, '/suno/fetch', {
        ids: tasks.map((t) => t.upstreamId),
        action: '',
      });
      const response = await deps.transport.send(request, AbortSignal.any([signal, AbortSignal.timeout(60_000)]));
      const body = await response.body.text();
      if (response.status !== 200) throw new Error(`suno fetch answered ${response.status}: ${body.slice(0, 200)}`);
      const states = new Map<string, TaskUpdate & { raw: unknown }>();
      for (const [id, task] of readFetchAnswer(body)) states.set(id, { ...task, raw: task });
      return states;
    },

    async advance(task, update) {
      const upstream = update.raw as SunoUpstreamTask;
      const now = seconds();
      const data = upstream.data === null ? task.row.data : JSON.stringify(upstream.data);
      if (update.status === task.status && update.progress === task.progress && data === task.row.data) return false;
      const started = update.status === 'IN_PROGRESS' || update.status === 'SUCCESS';
      return updateTaskIf(db, task.id, task.status, {
        status: update.status,
        progress: update.progress,
        data,
        start_time: Number(task.row.start_time) || (started ? now : 0),
        finish_time: update.status === 'SUCCESS' ? now : Number(task.row.finish_time),
        updated_at: now,
      });
    },

    async fail(task, reason) {
      return (
        (await failTaskAndRefund(db, { id: task.id, previous: task.status, reason, atSeconds: seconds() })) !==
        undefined
      );
    },
  };
}

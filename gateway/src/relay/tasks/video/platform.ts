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
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import { pollChannel } from '../poll-channel.ts';
import { readSoraVideo, soraUrl } from './sora.ts';

export const VIDEO_PLATFORM = 'video';

export interface VideoTaskRecord extends TaskRecord {
  row: TaskRow;
}

export interface VideoPlatformDeps {
  db: Kysely<Database>;
  routing: RoutingIndex;
  transport: Transport;
  timeoutMs: number;
  now?: () => number;
}

const record = (row: TaskRow): VideoTaskRecord => ({
  id: row.id,
  upstreamId: taskBillingContext(row)?.upstream_task_id ?? '',
  channelId: row.channel_id,
  status: row.status,
  progress: row.progress,
  submitTimeMs: Number(row.submit_time) * 1000,
  row,
});

/** Video tasks on the task engine: `tasks` rows of platform `video`, each polled with `GET /v1/videos/{id}`. */
export function videoPlatform(deps: VideoPlatformDeps): TaskPlatform<VideoTaskRecord> {
  const { db } = deps;
  const seconds = () => Math.floor((deps.now ?? Date.now)() / 1000);
  return {
    name: VIDEO_PLATFORM,
    timeoutMs: deps.timeoutMs,
    unfinished: async (limit) => (await unfinishedTasks(db, VIDEO_PLATFORM, limit)).map(record),

    async fetch(channelId, tasks, signal) {
      const { channel, key } = pollChannel(deps.routing, channelId, 'video');
      const states = new Map<string, TaskUpdate & { raw: unknown }>();
      for (const task of tasks) {
        if (signal.aborted) continue;
        const response = await deps.transport.send(
          {
            url: soraUrl(channel, `/videos/${encodeURIComponent(task.upstreamId)}`),
            method: 'GET',
            headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
          },
          AbortSignal.any([signal, AbortSignal.timeout(60_000)]),
        );
        const body = await response.body.text();
        // One task the upstream cannot answer for now is left as it is; it times out if that lasts.
        if (response.status !== 200) continue;
        let video: ReturnType<typeof readSoraVideo>;
        try {
          video = readSoraVideo(JSON.parse(body));
        } catch {
          video = undefined;
        }
        if (video) states.set(task.upstreamId, { ...video, raw: video });
      }
      return states;
    },

    async advance(task, update) {
      if (update.status === task.status && update.progress === task.progress) return false;
      const now = seconds();
      const started = update.status === 'IN_PROGRESS' || update.status === 'SUCCESS';
      return updateTaskIf(db, task.id, task.status, {
        status: update.status,
        progress: update.progress,
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

import type { Kysely } from 'kysely';
import { taskTokenQuota } from '../../../domain/billing/index.ts';
import type { TaskPlatform, TaskRecord, TaskUpdate } from '../../../domain/tasks/index.ts';
import type { Database } from '../../../store/database.ts';
import {
  failTaskAndRefund,
  succeedTaskAndSettle,
  type TaskSettlement,
  taskBillingContext,
  unfinishedTasks,
  updateTaskIf,
} from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import type { VideoState } from '../../protocols/video-tasks.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import { taskKey } from '../keys.ts';
import { videoTaskRef, videoTasksOf } from './submit.ts';
import { sendVideoRequest } from './upstream.ts';

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

/**
 * What a finished task costs by the tokens its upstream reports, when it was priced by a configured
 * model ratio (new-api's token settlement; a per-call price is final): undefined when it is not settled.
 */
export function tokenSettlement(row: TaskRow, tokens: number | undefined): TaskSettlement | undefined {
  const context = taskBillingContext(row);
  if (tokens === undefined || tokens <= 0 || !context?.model_ratio) return undefined;
  const ratios = context.other_ratios ?? {};
  const other = Object.values(ratios).reduce((product, value) => (value > 0 ? product * value : product), 1);
  const actual = taskTokenQuota(tokens, context.model_ratio, context.group_ratio, other);
  // Nothing to settle by (a free group): the price charged at submission stands.
  if (actual <= 0) return undefined;
  return {
    actual,
    reason: `tokens=${tokens}, model_ratio=${context.model_ratio}, group_ratio=${context.group_ratio}, other_ratio=${other}`,
    other: {
      total_tokens: tokens,
      model_ratio: context.model_ratio,
      group_ratio: context.group_ratio,
      ...Object.fromEntries(Object.entries(ratios).map(([name, value]) => [`${name}_ratio`, value])),
    },
  };
}

const record = (row: TaskRow): VideoTaskRecord => {
  const ref = videoTaskRef(row);
  return {
    id: row.id,
    upstreamId: ref.upstreamId,
    channelId: row.channel_id,
    keyIndex: ref.keyIndex ?? 0,
    status: row.status,
    progress: row.progress,
    submitTimeMs: Number(row.submit_time) * 1000,
    row,
  };
};

/**
 * Video tasks on the task engine: `tasks` rows of platform `video`, each asked after with its
 * channel's protocol's status query (relay/protocols/video-tasks.ts), with the key that submitted it.
 */
export function videoPlatform(deps: VideoPlatformDeps): TaskPlatform<VideoTaskRecord> {
  const { db } = deps;
  const seconds = () => Math.floor((deps.now ?? Date.now)() / 1000);
  return {
    name: VIDEO_PLATFORM,
    timeoutMs: deps.timeoutMs,
    unfinished: async (limit) => (await unfinishedTasks(db, VIDEO_PLATFORM, limit)).map(record),

    async fetch(source, tasks, signal) {
      // A channel that is gone, or no longer makes videos (its type changed), is never asked: its
      // tasks time out and are refunded.
      const channel = deps.routing.channel(source.channelId);
      const api = channel && videoTasksOf(channel);
      const key = channel && taskKey(channel, source.keyIndex);
      if (!channel || !api || key === undefined) {
        throw new Error(`channel ${source.channelId} is gone or makes no videos`);
      }
      const states = new Map<string, TaskUpdate & { raw: unknown }>();
      for (const task of tasks) {
        if (signal.aborted) continue;
        const ref = videoTaskRef(task.row);
        const query = await api.query(channel, key, ref);
        const response = await sendVideoRequest(
          { transport: deps.transport, tasks: api, channel, key },
          query,
          AbortSignal.any([signal, AbortSignal.timeout(60_000)]),
        );
        const body = await response.body.text();
        // One task the upstream cannot answer for now is left as it is; it times out if that lasts.
        const state = api.state(response.status, body);
        if (!state) continue;
        if (state.status === 'SUCCESS' && !state.url && state.file && api.fileUrl) {
          // A finished file without its address yet is not done for us: the next poll asks again.
          const located = await sendVideoRequest(
            { transport: deps.transport, tasks: api, channel, key },
            await api.fileUrl.request(channel, key, state.file),
            AbortSignal.any([signal, AbortSignal.timeout(60_000)]),
          );
          const url = api.fileUrl.read(located.status, await located.body.text());
          if (!url) continue;
          state.url = url;
        }
        states.set(task.upstreamId, { ...state, raw: state });
      }
      return states;
    },

    async advance(task, update) {
      if (update.status === task.status && update.progress === task.progress) return false;
      const now = seconds();
      const started = update.status === 'IN_PROGRESS' || update.status === 'SUCCESS';
      const state = update.raw as VideoState | undefined;
      const changes = {
        status: update.status,
        progress: update.progress,
        start_time: Number(task.row.start_time) || (started ? now : 0),
        finish_time: update.status === 'SUCCESS' ? now : Number(task.row.finish_time),
        updated_at: now,
        ...(update.status === 'SUCCESS' && state?.url ? { data: JSON.stringify({ url: state.url }) } : {}),
      };
      const settlement = update.status === 'SUCCESS' ? tokenSettlement(task.row, state?.totalTokens) : undefined;
      if (!settlement) return updateTaskIf(db, task.id, task.status, changes);
      const settled = await succeedTaskAndSettle(db, {
        id: task.id,
        previous: task.status,
        changes,
        settlement,
        atSeconds: now,
      });
      return settled !== undefined;
    },

    async fail(task, reason) {
      return (
        (await failTaskAndRefund(db, { id: task.id, previous: task.status, reason, atSeconds: seconds() })) !==
        undefined
      );
    },
  };
}

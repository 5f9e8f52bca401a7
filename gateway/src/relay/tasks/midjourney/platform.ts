import type { Kysely } from 'kysely';
import type { TaskPlatform, TaskRecord, TaskUpdate } from '../../../domain/tasks/index.ts';
import type { OutboundGuard } from '../../../http/outbound/guard.ts';
import { OutboundRefused } from '../../../http/outbound/policy.ts';
import type { Database } from '../../../store/database.ts';
import {
  failMidjourneyAndRefund,
  type MidjourneyRow,
  unfinishedMidjourneys,
  updateMidjourneyIf,
} from '../../../store/repositories/task-billing.ts';
import { midjourneyRequest } from '../../protocols/midjourney/index.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import { pollChannel } from '../poll-channel.ts';
import { mjTaskView } from './view.ts';

export interface MjTaskRecord extends TaskRecord {
  row: MidjourneyRow;
}

export interface MidjourneyPlatformDeps {
  db: Kysely<Database>;
  routing: RoutingIndex;
  transport: Transport;
  timeoutMs: number;
  /** Whether MjNotifyEnabled is on now. */
  notifyEnabled: () => boolean;
  /** The notifyHook is the client's URL: called only where fetch_setting.* allows. */
  outbound: OutboundGuard;
  logger: { warn(obj: object, msg: string): void };
  /** The upstream's description of a task, shown in task lists, without the channel's secrets (relay/secrets). */
  scrub: (text: string, channelId: number) => string;
}

type Upstream = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value : '');
const millis = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : 0);
const jsonText = (value: unknown) => (value === undefined || value === null ? '' : JSON.stringify(value));

const record = (row: MidjourneyRow): MjTaskRecord => ({
  id: row.id,
  upstreamId: row.mj_id,
  channelId: row.channel_id,
  keyIndex: row.key_index ?? 0,
  status: row.status,
  progress: row.progress,
  submitTimeMs: Number(row.submit_time),
  row,
});

/**
 * Midjourney on the task engine: the `midjourneys` table, polled with `list-by-condition` per channel and
 * key (each key is its own midjourney-proxy account).
 */
export function midjourneyPlatform(deps: MidjourneyPlatformDeps): TaskPlatform<MjTaskRecord> {
  const { db } = deps;
  return {
    name: 'midjourney',
    timeoutMs: deps.timeoutMs,
    unfinished: async (limit) => (await unfinishedMidjourneys(db, limit)).map(record),

    async fetch(source, tasks, signal) {
      const { channel, key } = pollChannel(deps.routing, source, 'midjourney');
      const request = midjourneyRequest(channel, key, '/mj/task/list-by-condition', {
        ids: tasks.map((t) => t.upstreamId),
      });
      const response = await deps.transport.send(request, AbortSignal.any([signal, AbortSignal.timeout(60_000)]));
      const body = await response.body.text();
      if (response.status !== 200)
        throw new Error(`list-by-condition answered ${response.status}: ${body.slice(0, 200)}`);
      const list = JSON.parse(body) as unknown;
      const states = new Map<string, TaskUpdate & { raw: unknown }>();
      if (!Array.isArray(list)) return states;
      for (const item of list as Upstream[]) {
        const id = text(item?.id);
        if (!id) continue;
        states.set(id, {
          status: text(item.status),
          progress: text(item.progress),
          failReason: text(item.failReason),
          raw: item,
        });
      }
      return states;
    },

    async advance(task, update) {
      const raw = update.raw as Upstream;
      const changes = {
        status: update.status,
        progress: update.progress,
        prompt_en: text(raw.promptEn) || task.row.prompt_en,
        description: deps.scrub(text(raw.description), task.channelId) || task.row.description,
        state: text(raw.state) || task.row.state,
        start_time: millis(raw.startTime) || Number(task.row.start_time),
        finish_time: millis(raw.finishTime) || Number(task.row.finish_time),
        image_url: text(raw.imageUrl) || task.row.image_url,
        video_url: text(raw.videoUrl) || task.row.video_url,
        video_urls: raw.videoUrls ? jsonText(raw.videoUrls) : task.row.video_urls,
        buttons: raw.buttons ? jsonText(raw.buttons) : task.row.buttons,
        properties: raw.properties ? jsonText(raw.properties) : task.row.properties,
      };
      const same = (Object.keys(changes) as Array<keyof typeof changes>).every(
        (k) => String(changes[k]) === String(task.row[k]),
      );
      if (same) return false;
      return updateMidjourneyIf(db, task.id, task.status, changes);
    },

    async fail(task, reason) {
      const done = await failMidjourneyAndRefund(db, {
        id: task.id,
        previous: task.status,
        reason,
        progress: task.progress,
        finishTime: Date.now(),
        atSeconds: Math.floor(Date.now() / 1000),
      });
      return done !== undefined;
    },

    transitioned(task) {
      if (!task.row.notify_hook || !deps.notifyEnabled()) return;
      void notify(deps, task).catch((err: unknown) => {
        if (err instanceof OutboundRefused) {
          deps.logger.warn(
            { code: err.code, reason: err.reason, detail: err.message, task: task.upstreamId },
            'midjourney notifyHook refused by fetch_setting',
          );
        } else deps.logger.warn({ err, task: task.upstreamId }, 'midjourney notifyHook call failed');
      });
    },
  };
}

/** Calls the client's notifyHook with the task as it now stands (the body midjourney-proxy sends). */
async function notify(deps: MidjourneyPlatformDeps, task: MjTaskRecord): Promise<void> {
  const row = await deps.db.selectFrom('midjourneys').selectAll().where('id', '=', task.id).executeTakeFirst();
  if (!row) return;
  const response = await deps.outbound.send({
    url: row.notify_hook,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(mjTaskView(row, undefined)),
    signal: AbortSignal.timeout(10_000),
  });
  await response.body.dump();
}

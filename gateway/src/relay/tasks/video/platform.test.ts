import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../../tests/support/database.ts';
import type { Store } from '../../../store/index.ts';
import { insertTask } from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { jsonAnswer } from '../../protocols/answer.ts';
import type { UpstreamRequest } from '../../protocols/types.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { tokenSettlement, videoPlatform } from './platform.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
});
afterAll(() => dispose());

const channel = { id: 7, type: 55, baseUrl: 'https://sora.example/', keys: ['sk-sora'] } as ChannelSnapshot;
const minimax = { id: 9, type: 35, baseUrl: 'https://minimax.example', keys: ['mm-key'] } as ChannelSnapshot;
const routing = {
  channel: (id: number) => (id === 7 ? channel : id === 9 ? minimax : undefined),
} as unknown as RoutingIndex;

function platform(answers: Array<[number, unknown]>) {
  const sent: UpstreamRequest[] = [];
  const transport = {
    send: async (request: UpstreamRequest) => {
      sent.push(request);
      const [status, body] = answers.shift() ?? [404, { error: { message: 'not found' } }];
      return jsonAnswer(status, body);
    },
  } as unknown as Transport;
  const video = videoPlatform({ db: store.db, routing, transport, timeoutMs: 60_000, now: () => 1_000_000 });
  return { sent, video };
}

const task = (publicId: string, upstreamId: string, channelId = 7) =>
  insertTask(store.db, {
    created_at: 1,
    updated_at: 1,
    task_id: publicId,
    platform: 'video',
    user_id: 1,
    channel_id: channelId,
    quota: 10,
    action: 'GENERATE',
    status: 'QUEUED',
    progress: '0%',
    submit_time: 900,
    private_data: JSON.stringify({ upstream_task_id: upstreamId, model_name: 'sora-2' }),
  });

describe('videoPlatform', () => {
  it('asks for each task by its upstream id with the channel key, skipping ones the upstream cannot answer', async () => {
    await task('video_a', 'up-a');
    await task('video_b', 'up-b');
    const { sent, video } = platform([
      [200, { id: 'up-a', object: 'video', status: 'in_progress', progress: 40 }],
      [500, { error: { message: 'try later' } }],
    ]);
    const tasks = await video.unfinished(10);
    expect(tasks.map((t) => t.upstreamId)).toEqual(['up-a', 'up-b']);
    const states = await video.fetch({ channelId: 7, keyIndex: 0 }, tasks, new AbortController().signal);
    expect(sent.map((r) => [r.method, r.url, r.headers.authorization])).toEqual([
      ['GET', 'https://sora.example/v1/videos/up-a', 'Bearer sk-sora'],
      ['GET', 'https://sora.example/v1/videos/up-b', 'Bearer sk-sora'],
    ]);
    expect([...states.keys()]).toEqual(['up-a']);
    expect(states.get('up-a')).toMatchObject({ status: 'IN_PROGRESS', progress: '40%' });
  });

  it('writes a change once (compare-and-set), and nothing when nothing changed', async () => {
    const id = await task('video_c', 'up-c');
    const { video } = platform([]);
    const [record] = (await video.unfinished(10)).filter((t) => t.id === id);
    const done = { status: 'SUCCESS', progress: '100%', failReason: '', raw: null };
    expect(await video.advance(record!, done)).toBe(true);
    expect(await video.advance(record!, done)).toBe(false);
    const row = await store.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'SUCCESS', progress: '100%', start_time: 1000, finish_time: 1000 });
    const [same] = (await video.unfinished(10)).filter((t) => t.upstreamId === 'up-a');
    expect(await video.advance(same!, { status: 'QUEUED', progress: '0%', failReason: '', raw: null })).toBe(false);
  });

  it("asks a finished file's address where the vendor names a file (MiniMax), and asks again while it has none", async () => {
    await task('video_m', 'mm-task', 9);
    const tasks = (await platform([]).video.unfinished(10)).filter((t) => t.upstreamId === 'mm-task');
    const success = { task_id: 'mm-task', status: 'Success', file_id: '42', base_resp: { status_code: 0 } };
    const { sent, video } = platform([
      [200, success],
      [200, { file: { file_id: 42, download_url: 'https://cdn.example/42.mp4' }, base_resp: { status_code: 0 } }],
    ]);
    const states = await video.fetch({ channelId: 9, keyIndex: 0 }, tasks, new AbortController().signal);
    expect(sent.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['https://minimax.example/v1/query/video_generation?task_id=mm-task', 'Bearer mm-key'],
      ['https://minimax.example/v1/files/retrieve?file_id=42', 'Bearer mm-key'],
    ]);
    expect(states.get('mm-task')).toMatchObject({ status: 'SUCCESS', url: 'https://cdn.example/42.mp4' });
    const later = platform([
      [200, success],
      [200, { base_resp: { status_code: 1002, status_msg: 'rate limit' } }],
    ]);
    expect((await later.video.fetch({ channelId: 9, keyIndex: 0 }, tasks, new AbortController().signal)).size).toBe(0);
  });

  it('refuses to poll a channel that is gone, so its tasks wait (or time out)', async () => {
    const { video } = platform([]);
    await expect(video.fetch({ channelId: 8, keyIndex: 0 }, [], new AbortController().signal)).rejects.toThrow(
      'channel 8 is gone',
    );
  });

  it('settles a task priced by model ratio by the tokens it used; a per-call price stands', () => {
    const row = (context: Record<string, unknown>) => ({ private_data: JSON.stringify(context) }) as TaskRow;
    const priced = { upstream_task_id: 'u', model_name: 'm', model_price: -1, group_ratio: 1 };
    // new-api's worked example: 1000 tokens × 0.391 × 1 × 28/46 = 238.0 (truncated).
    expect(
      tokenSettlement(row({ ...priced, model_ratio: 0.391, other_ratios: { video_input: 28 / 46 } }), 1000),
    ).toMatchObject({
      actual: 238,
      other: { total_tokens: 1000, model_ratio: 0.391, group_ratio: 1, video_input_ratio: 28 / 46 },
    });
    expect(tokenSettlement(row({ ...priced, model_ratio: 3.85, group_ratio: 2 }), 108_000)?.actual).toBe(831_600);
    expect(tokenSettlement(row({ ...priced, model_price: 0.4 }), 108_000)).toBeUndefined();
    expect(tokenSettlement(row({ ...priced, model_ratio: 3.85 }), undefined)).toBeUndefined();
    expect(tokenSettlement(row({ ...priced, model_ratio: 3.85, group_ratio: 0 }), 1000)).toBeUndefined();
  });
});

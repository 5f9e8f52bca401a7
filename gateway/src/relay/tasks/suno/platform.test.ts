import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../../tests/support/database.ts';
import type { Store } from '../../../store/index.ts';
import { insertTask } from '../../../store/repositories/task-billing.ts';
import { jsonAnswer } from '../../protocols/answer.ts';
import type { UpstreamRequest } from '../../protocols/types.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { sunoPlatform } from './platform.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
});
afterAll(() => dispose());

const channel = { id: 7, type: 36, baseUrl: 'https://suno.example/', keys: ['sk-suno'] } as ChannelSnapshot;
const twoKeys = { id: 10, type: 36, baseUrl: 'https://suno.example/', keys: ['sk-one', 'sk-two'] } as ChannelSnapshot;
const routing = {
  channel: (id: number) => (id === 7 ? channel : id === 10 ? twoKeys : undefined),
} as unknown as RoutingIndex;

function platform(answers: unknown[], channels: RoutingIndex = routing) {
  const sent: UpstreamRequest[] = [];
  const transport = {
    send: async (request: UpstreamRequest) => {
      sent.push(request);
      return jsonAnswer(200, answers.shift());
    },
  } as unknown as Transport;
  const suno = sunoPlatform({ db: store.db, routing: channels, transport, timeoutMs: 60_000, now: () => 1_000_000 });
  return { sent, suno };
}

const task = (publicId: string, upstreamId: string, on: { channelId?: number; keyIndex?: number } = {}) =>
  insertTask(store.db, {
    created_at: 1,
    updated_at: 1,
    task_id: publicId,
    platform: 'suno',
    user_id: 1,
    channel_id: on.channelId ?? 7,
    quota: 10,
    action: 'MUSIC',
    status: 'SUBMITTED',
    progress: '0%',
    submit_time: 900,
    private_data: JSON.stringify({
      upstream_task_id: upstreamId,
      model_name: 'suno_music',
      ...(on.keyIndex === undefined ? {} : { key_index: on.keyIndex }),
    }),
  });

describe('sunoPlatform', () => {
  it('asks a channel for its tasks in one batch by upstream id, with the channel key', async () => {
    await task('task_a', 'up-a');
    await task('task_b', 'up-b');
    const { sent, suno } = platform([
      { code: 'success', message: '', data: [{ task_id: 'up-a', status: 'IN_PROGRESS', progress: '40%' }] },
    ]);
    const tasks = await suno.unfinished(10);
    expect(tasks.map((t) => [t.upstreamId, t.submitTimeMs])).toEqual([
      ['up-a', 900_000],
      ['up-b', 900_000],
    ]);
    const states = await suno.fetch({ channelId: 7, keyIndex: 0 }, tasks, new AbortController().signal);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      url: 'https://suno.example/suno/fetch',
      headers: { authorization: 'Bearer sk-suno' },
    });
    expect(JSON.parse(String(sent[0]!.body))).toEqual({ ids: ['up-a', 'up-b'], action: '' });
    expect([...states.keys()]).toEqual(['up-a']);
    expect(states.get('up-a')).toMatchObject({ status: 'IN_PROGRESS', progress: '40%' });
  });

  it('asks with the key each task was submitted with: its account alone knows the task', async () => {
    await task('task_k0', 'up-k0', { channelId: 10, keyIndex: 0 });
    await task('task_k1', 'up-k1', { channelId: 10, keyIndex: 1 });
    // Submitted before keys were chosen: the first key took it.
    await task('task_old', 'up-old', { channelId: 10 });
    const { sent, suno } = platform([
      { code: 'success', message: '', data: [] },
      { code: 'success', message: '', data: [] },
    ]);
    const tasks = (await suno.unfinished(10)).filter((t) => t.channelId === 10);
    expect(tasks.map((t) => [t.upstreamId, t.keyIndex])).toEqual([
      ['up-k0', 0],
      ['up-k1', 1],
      ['up-old', 0],
    ]);
    const signal = new AbortController().signal;
    await suno.fetch({ channelId: 10, keyIndex: 1 }, [tasks[1]!], signal);
    // A key since removed from the channel: the first key is asked (the tasks time out if it knows nothing).
    await suno.fetch({ channelId: 10, keyIndex: 5 }, [tasks[0]!], signal);
    expect(sent.map((r) => r.headers.authorization)).toEqual(['Bearer sk-two', 'Bearer sk-one']);
  });

  it('writes a change once (compare-and-set), and nothing when nothing changed', async () => {
    const id = await task('task_c', 'up-c');
    const { suno } = platform([]);
    const [record] = (await suno.unfinished(10)).filter((t) => t.id === id);
    const clips = [{ id: 'clip-1', audio_url: 'https://cdn/clip-1.mp3' }];
    const done = { status: 'SUCCESS', progress: '100%', failReason: '', raw: { data: clips } };
    expect(await suno.advance(record!, done)).toBe(true);
    // A second pod holding the same stale record writes nothing.
    expect(await suno.advance(record!, done)).toBe(false);
    const row = await store.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'SUCCESS', progress: '100%', start_time: 1000, finish_time: 1000 });
    expect(JSON.parse(row.data)).toEqual(clips);
    const same = { status: 'SUBMITTED', progress: '0%', failReason: '', raw: { data: null } };
    const [fresh] = (await suno.unfinished(10)).filter((t) => t.upstreamId === 'up-a');
    expect(await suno.advance(fresh!, same)).toBe(false);
  });

  it('refuses to poll a channel that is gone, so its tasks wait (or time out)', async () => {
    const { suno } = platform([]);
    await expect(suno.fetch({ channelId: 8, keyIndex: 0 }, [], new AbortController().signal)).rejects.toThrow(
      'channel 8 is gone',
    );
    // Nor one whose type was changed: it would be sent Suno's status query.
    const changed = platform([], { channel: () => ({ ...channel, type: 1 }) } as unknown as RoutingIndex).suno;
    await expect(changed.fetch({ channelId: 7, keyIndex: 0 }, [], new AbortController().signal)).rejects.toThrow(
      'not a suno channel',
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../../tests/support/database.ts';
import type { Store } from '../../../store/index.ts';
import { insertMidjourney } from '../../../store/repositories/task-billing.ts';
import { jsonAnswer } from '../../protocols/answer.ts';
import type { UpstreamRequest } from '../../protocols/types.ts';
import type { RoutingIndex } from '../../routing/index-cache.ts';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { midjourneyPlatform } from './platform.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
});
afterAll(() => dispose());

const channel = { id: 4, type: 2, baseUrl: 'https://mj.example', keys: ['secret-a', 'secret-b'] } as ChannelSnapshot;
const routing = { channel: (id: number) => (id === 4 ? channel : undefined) } as unknown as RoutingIndex;

function platform(answers: unknown[]) {
  const sent: UpstreamRequest[] = [];
  const transport = {
    send: async (request: UpstreamRequest) => {
      sent.push(request);
      return jsonAnswer(200, answers.shift() ?? []);
    },
  } as unknown as Transport;
  const mj = midjourneyPlatform({
    db: store.db,
    routing,
    transport,
    timeoutMs: 60_000,
    notifyEnabled: () => false,
    outbound: undefined as never,
    logger: { warn() {} },
    // Stands in for the secret scrubber: marks what went through it, with the task's channel.
    scrub: (text, channelId) => text.replace(/secret-[ab]/g, `*** (channel ${channelId})`),
  });
  return { sent, mj };
}

const drawing = (mjId: string, keyIndex: number | null) =>
  insertMidjourney(store.db, {
    user_id: 1,
    action: 'IMAGINE',
    mj_id: mjId,
    submit_time: Date.now(),
    channel_id: 4,
    status: 'SUBMITTED',
    key_index: keyIndex,
  });

describe('midjourneyPlatform', () => {
  it('lists a key’s tasks with that key: its account alone knows them', async () => {
    await drawing('mj-0', 0);
    await drawing('mj-1', 1);
    // Drawn before keys were chosen: the first key took it.
    await drawing('mj-old', null);
    const { sent, mj } = platform([[{ id: 'mj-1', status: 'IN_PROGRESS', progress: '50%' }]]);
    const tasks = await mj.unfinished(10);
    expect(tasks.map((t) => [t.upstreamId, t.keyIndex])).toEqual([
      ['mj-0', 0],
      ['mj-1', 1],
      ['mj-old', 0],
    ]);
    const states = await mj.fetch({ channelId: 4, keyIndex: 1 }, [tasks[1]!], new AbortController().signal);
    expect(sent[0]).toMatchObject({
      url: 'https://mj.example/mj/task/list-by-condition',
      headers: { 'mj-api-secret': 'secret-b' },
    });
    expect(JSON.parse(String(sent[0]!.body))).toEqual({ ids: ['mj-1'] });
    expect(states.get('mj-1')).toMatchObject({ status: 'IN_PROGRESS', progress: '50%' });
    await mj.fetch({ channelId: 4, keyIndex: 0 }, [tasks[0]!, tasks[2]!], new AbortController().signal);
    expect(sent[1]!.headers['mj-api-secret']).toBe('secret-a');
  });

  it("stores the upstream's description of a task through the scrubber, with the task's channel", async () => {
    const id = await drawing('mj-quoting', 0);
    const { mj } = platform([
      [{ id: 'mj-quoting', status: 'IN_PROGRESS', progress: '10%', description: 'key secret-a' }],
    ]);
    const task = (await mj.unfinished(10)).find((t) => t.upstreamId === 'mj-quoting')!;
    const update = (await mj.fetch({ channelId: 4, keyIndex: 0 }, [task], new AbortController().signal)).get(
      'mj-quoting',
    )!;
    expect(await mj.advance(task, update)).toBe(true);
    const row = await store.db.selectFrom('midjourneys').select('description').where('id', '=', id).executeTakeFirst();
    expect(row?.description).toBe('key *** (channel 4)');
  });
});

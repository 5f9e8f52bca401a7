import { describe, expect, it } from 'vitest';
import { pollPlatform, type TaskPlatform, type TaskRecord, type TaskUpdate } from './engine.ts';

const silent = { warn() {} };
const unchanged = (reason: string) => reason;

function platform(records: TaskRecord[], upstream: Record<string, Record<string, TaskUpdate> | Error>) {
  const log: string[] = [];
  const fetched: Array<[number, string[]]> = [];
  const byKey: Array<[string, string[]]> = [];
  const p: TaskPlatform = {
    name: 'fake',
    timeoutMs: 1000,
    unfinished: async () => records,
    async fetch({ channelId, keyIndex }, tasks) {
      fetched.push([channelId, tasks.map((t) => t.upstreamId)]);
      byKey.push([`${channelId}:${keyIndex}`, tasks.map((t) => t.upstreamId)]);
      const answer = upstream[`${channelId}:${keyIndex}`] ?? upstream[channelId];
      if (answer instanceof Error) throw answer;
      return new Map(Object.entries(answer ?? {}).map(([id, u]) => [id, { ...u, raw: u }]));
    },
    async advance(task, update) {
      log.push(`advance ${task.upstreamId} ${task.status}→${update.status} ${update.progress}`);
      return true;
    },
    async fail(task, reason) {
      log.push(`fail ${task.upstreamId} ${reason}`);
      return true;
    },
    transitioned(task) {
      log.push(`told ${task.upstreamId}`);
    },
  };
  return { p, log, fetched, byKey };
}

const task = (id: string, channelId: number, over: Partial<TaskRecord> = {}): TaskRecord => ({
  id: Number(id.replace(/\D/g, '')) || 1,
  upstreamId: id,
  channelId,
  keyIndex: 0,
  status: 'SUBMITTED',
  progress: '0%',
  submitTimeMs: 10_000,
  ...over,
});

describe('task engine', () => {
  it('asks each channel once for its tasks, writes changes, fails failures, and leaves the rest', async () => {
    const { p, log, fetched } = platform([task('a1', 1), task('a2', 1), task('b3', 2), task('c4', 3)], {
      1: {
        a1: { status: 'IN_PROGRESS', progress: '40%', failReason: '' },
        a2: { status: 'FAILURE', progress: '', failReason: 'banned' },
      },
      2: new Error('down'),
      3: { c4: { status: 'SUBMITTED', progress: '0%', failReason: '' } },
    });
    await pollPlatform(p, 100, () => 10_500, new AbortController().signal, silent, unchanged);
    expect(fetched).toEqual([
      [1, ['a1', 'a2']],
      [2, ['b3']],
      [3, ['c4']],
    ]);
    expect(log).toEqual([
      'advance a1 SUBMITTED→IN_PROGRESS 40%',
      'told a1',
      'fail a2 banned',
      'told a2',
      // Unchanged: written (the platform decides it is a no-op) but nobody is told.
      'advance c4 SUBMITTED→SUBMITTED 0%',
    ]);
  });

  it("stores an upstream's failure reason as the scrubber gives it back for the task's channel", async () => {
    const { p, log } = platform([task('a1', 7)], {
      7: { a1: { status: 'FAILURE', progress: '', failReason: 'bad key sk-secret' } },
    });
    const scrub = (reason: string, channelId: number) => reason.replace('sk-secret', `*** (channel ${channelId})`);
    await pollPlatform(p, 100, () => 10_500, new AbortController().signal, silent, scrub);
    expect(log).toEqual(['fail a1 bad key *** (channel 7)', 'told a1']);
  });

  it('asks each key of a channel apart, since each key is its own upstream account', async () => {
    const { p, log, byKey } = platform(
      [task('a1', 1), task('b2', 1, { keyIndex: 1 }), task('a3', 1), task('c4', 2, { keyIndex: 1 })],
      {
        '1:0': { a1: { status: 'IN_PROGRESS', progress: '40%', failReason: '' } },
        '1:1': new Error('key 1 refused'),
        '2:1': { c4: { status: 'SUCCESS', progress: '100%', failReason: '' } },
      },
    );
    await pollPlatform(p, 100, () => 10_500, new AbortController().signal, silent, unchanged);
    expect(byKey).toEqual([
      ['1:0', ['a1', 'a3']],
      ['1:1', ['b2']],
      ['2:1', ['c4']],
    ]);
    // One key's outage holds up neither the channel's other key nor other channels.
    expect(log).toEqual([
      'advance a1 SUBMITTED→IN_PROGRESS 40%',
      'told a1',
      'advance c4 SUBMITTED→SUCCESS 100%',
      'told c4',
    ]);
  });

  it('fails a task past its timeout without asking upstream, unless it is already at 100%', async () => {
    const { p, log, fetched } = platform(
      [task('old5', 1, { submitTimeMs: 0 }), task('done6', 1, { submitTimeMs: 0, progress: '100%' })],
      { 1: {} },
    );
    await pollPlatform(p, 100, () => 5_000, new AbortController().signal, silent, unchanged);
    expect(log).toEqual(['fail old5 upstream timeout', 'told old5']);
    expect(fetched).toEqual([[1, ['done6']]]);
  });

  it('asks nothing about a task the upstream never gave an id, and lets it time out', async () => {
    const { p, log, fetched } = platform([task('a7', 1), task('', 1, { id: 8 }), task('', 2, { id: 9 })], { 1: {} });
    await pollPlatform(p, 100, () => 10_500, new AbortController().signal, silent, unchanged);
    expect(fetched).toEqual([[1, ['a7']]]);
    expect(log).toEqual([]);
    await pollPlatform(p, 100, () => 20_000, new AbortController().signal, silent, unchanged);
    expect(log).toEqual([
      'fail a7 upstream timeout',
      'told a7',
      'fail  upstream timeout',
      'told ',
      'fail  upstream timeout',
      'told ',
    ]);
  });

  it('stops when the lease is lost', async () => {
    const controller = new AbortController();
    controller.abort();
    const { p, fetched } = platform([task('a1', 1)], { 1: {} });
    await pollPlatform(p, 100, () => 10_000, controller.signal, silent, unchanged);
    expect(fetched).toEqual([]);
  });
});

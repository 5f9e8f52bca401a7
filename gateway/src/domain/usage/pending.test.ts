import { describe, expect, it } from 'vitest';
import { consumeLogRow, errorLogRow, PendingUsage } from './pending.ts';
import type { ConsumeRecord } from './types.ts';

const HOUR = 1_700_002_800; // a whole hour

function record(over: Partial<ConsumeRecord> = {}): ConsumeRecord {
  return {
    userId: 1,
    username: 'alice',
    tokenId: 10,
    tokenName: 'default',
    channelId: 100,
    channelName: 'openai',
    modelName: 'gpt-4o',
    group: 'default',
    useTimeSeconds: 2,
    isStream: false,
    ip: '',
    requestId: 'r',
    content: '',
    other: {},
    quota: 10,
    promptTokens: 5,
    completionTokens: 3,
    ...over,
  };
}

describe('PendingUsage', () => {
  it('merges counters per user, token, channel and (user, model, hour), sorted by id', () => {
    const p = new PendingUsage();
    p.addCounters(record({ userId: 2, tokenId: 20, quota: 7 }), HOUR + 10, 'gpt-4o', true);
    p.addCounters(record({ quota: 10 }), HOUR + 5, 'gpt-4o', true);
    p.addCounters(record({ quota: 5 }), HOUR + 3599, 'gpt-4o', true);
    p.addCounters(record({ quota: 1 }), HOUR + 3600, 'gpt-4o', true);
    p.addCounters(record({ quota: 2 }), HOUR + 20, 'o3', true);
    const batch = p.take()!;
    expect(batch.records).toBe(5);
    expect(batch.users).toEqual([
      { id: 1, quota: 18, requests: 4 },
      { id: 2, quota: 7, requests: 1 },
    ]);
    expect(batch.tokens).toEqual([
      { id: 10, quota: 18, accessedAt: HOUR + 3600 },
      { id: 20, quota: 7, accessedAt: HOUR + 10 },
    ]);
    expect(batch.channels).toEqual([{ id: 100, quota: 25 }]);
    expect(batch.quotaData).toEqual([
      { userId: 1, username: 'alice', modelName: 'gpt-4o', hour: HOUR, quota: 15, tokens: 16, count: 2 },
      { userId: 1, username: 'alice', modelName: 'gpt-4o', hour: HOUR + 3600, quota: 1, tokens: 8, count: 1 },
      { userId: 1, username: 'alice', modelName: 'o3', hour: HOUR, quota: 2, tokens: 8, count: 1 },
      { userId: 2, username: 'alice', modelName: 'gpt-4o', hour: HOUR, quota: 7, tokens: 8, count: 1 },
    ]);
    expect(p.empty).toBe(true);
    expect(p.take()).toBeUndefined();
  });

  it('honours counter overrides and skips ids of 0 and empty buckets when data export is off', () => {
    const p = new PendingUsage();
    p.addCounters(
      record({ tokenId: 0, channelId: 0, quota: 50, counters: { requests: 0, userQuota: 30 } }),
      HOUR,
      'gpt-4o',
      false,
    );
    const batch = p.take()!;
    expect(batch.users).toEqual([{ id: 1, quota: 30, requests: 0 }]);
    expect(batch.tokens).toEqual([]);
    expect(batch.channels).toEqual([]);
    expect(batch.quotaData).toEqual([]);
    expect(batch.observations).toEqual([]);
  });

  it('counts requests per (channel, group, client type) with first and last seen, sorted by that key', () => {
    const p = new PendingUsage();
    p.addCounters(record({ clientType: 'curl' }), HOUR + 30, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'curl' }), HOUR + 10, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'curl' }), HOUR + 20, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'codex', group: 'vip' }), HOUR + 5, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'browser', channelId: 7 }), HOUR, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'curl', group: 'a\u0000b' }), HOUR, 'gpt-4o', false);
    // No client type (a channel test) or no channel: not observed, though still counted.
    p.addCounters(record(), HOUR, 'gpt-4o', false);
    p.addCounters(record({ clientType: 'curl', channelId: 0 }), HOUR, 'gpt-4o', false);
    const batch = p.take()!;
    expect(batch.records).toBe(8);
    expect(batch.observations).toEqual([
      { channelId: 7, group: 'default', clientType: 'browser', count: 1, firstSeen: HOUR, lastSeen: HOUR },
      { channelId: 100, group: 'ab', clientType: 'curl', count: 1, firstSeen: HOUR, lastSeen: HOUR },
      { channelId: 100, group: 'default', clientType: 'curl', count: 3, firstSeen: HOUR + 10, lastSeen: HOUR + 30 },
      { channelId: 100, group: 'vip', clientType: 'codex', count: 1, firstSeen: HOUR + 5, lastSeen: HOUR + 5 },
    ]);
    expect(p.take()).toBeUndefined();
  });

  it('takes every log row with the counters they go with, and is empty after', () => {
    const p = new PendingUsage();
    for (let i = 0; i < 5; i++) {
      const r = record({ requestId: `r${i}` });
      p.addLog(consumeLogRow(r, HOUR, 'gpt-4o'));
      p.addCounters(r, HOUR, 'gpt-4o', false);
    }
    const batch = p.take()!;
    expect(batch.logs.map((l) => l.request_id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(batch.records).toBe(5);
    expect(p.logs).toBe(0);
    expect(p.take()).toBeUndefined();
  });
});

describe('log rows', () => {
  it('maps every column and serialises other; error rows carry no quota', () => {
    const r = record({ ip: '10.0.0.1', isStream: true, other: { model_ratio: 1 }, content: 'a\u0000b' });
    expect(consumeLogRow(r, HOUR, 'gpt-4o')).toEqual({
      user_id: 1,
      created_at: HOUR,
      type: 2,
      content: 'ab',
      username: 'alice',
      token_name: 'default',
      model_name: 'gpt-4o',
      quota: 10,
      prompt_tokens: 5,
      completion_tokens: 3,
      use_time: 2,
      is_stream: true,
      channel_id: 100,
      channel_name: 'openai',
      token_id: 10,
      group: 'default',
      ip: '10.0.0.1',
      request_id: 'r',
      other: '{"model_ratio":1}',
    });
    expect(errorLogRow({ ...r, other: '{"x":1}' }, HOUR, 'gpt-4o')).toMatchObject({
      type: 5,
      quota: 0,
      prompt_tokens: 5,
      other: '{"x":1}',
    });
  });
});

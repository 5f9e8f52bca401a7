import { describe, expect, it } from 'vitest';
import { afterFailure, afterKeyRecovery, afterRecovery, autoDisabledKeys } from './health.ts';
import { channelInfoFor } from './keys.ts';
import type { ChannelRow } from './view.ts';

const row = (fields: Partial<ChannelRow>): ChannelRow =>
  ({ id: 7, status: 1, other_info: '', channel_info: JSON.stringify(channelInfoFor(1)), ...fields }) as ChannelRow;

describe('afterFailure', () => {
  it('disables a single-key channel with the reason and time', () => {
    const change = afterFailure(row({ other_info: '{"note":"kept"}' }), 'HTTP 401: bad key', 1000);
    expect(change?.status).toBe(3);
    expect(JSON.parse(change?.other_info ?? '')).toEqual({
      note: 'kept',
      status_reason: 'HTTP 401: bad key',
      status_time: 1000,
    });
  });

  it('never overrides a channel disabled by hand, nor one already disabled', () => {
    expect(afterFailure(row({ status: 2 }), 'x', 1)).toBeUndefined();
    expect(afterFailure(row({ status: 3 }), 'x', 1)).toBeUndefined();
  });

  it('disables one key of a multi-key channel, and the channel with the last key', () => {
    const multi = row({ channel_info: JSON.stringify(channelInfoFor(2)) });
    const first = afterFailure(multi, 'bad', 5, 1);
    expect(first?.status).toBe(1);
    const info = JSON.parse(first?.channel_info ?? '');
    expect(info).toMatchObject({
      multi_key_status_list: { '1': 3 },
      multi_key_disabled_reason: { '1': 'bad' },
      multi_key_disabled_time: { '1': 5 },
    });
    // The same key again: nothing new.
    expect(afterFailure({ ...multi, channel_info: first?.channel_info ?? '' }, 'bad', 6, 1)).toBeUndefined();
    const second = afterFailure({ ...multi, channel_info: first?.channel_info ?? '' }, 'worse', 7, 0);
    expect(second?.status).toBe(3);
    expect(JSON.parse(second?.channel_info ?? '').multi_key_status_list).toEqual({ '0': 3, '1': 3 });
  });
});

describe('afterRecovery', () => {
  it('enables a channel the gateway disabled, with its keys, but keeps keys disabled by hand', () => {
    const info = { ...channelInfoFor(3), multi_key_status_list: { '0': 3, '1': 2, '2': 3 } };
    const change = afterRecovery(
      row({ status: 3, other_info: '{"status_reason":"x","status_time":1,"a":1}', channel_info: JSON.stringify(info) }),
    );
    expect(change?.status).toBe(1);
    expect(JSON.parse(change?.other_info ?? '')).toEqual({ a: 1 });
    expect(JSON.parse(change?.channel_info ?? '').multi_key_status_list).toEqual({ '1': 2 });
  });

  it('leaves enabled and hand-disabled channels alone', () => {
    expect(afterRecovery(row({ status: 1 }))).toBeUndefined();
    expect(afterRecovery(row({ status: 2 }))).toBeUndefined();
  });
});

describe('afterKeyRecovery', () => {
  const info = {
    ...channelInfoFor(3),
    multi_key_status_list: { '0': 3, '1': 2, '2': 3 },
    multi_key_disabled_time: { '0': 5, '2': 6 },
  };
  const disabled = row({
    status: 3,
    other_info: '{"status_reason":"x","status_time":6}',
    channel_info: JSON.stringify(info),
  });

  it('enables the tested key and the channel, and leaves the other disabled keys off', () => {
    const change = afterKeyRecovery(disabled, 2);
    expect(change?.status).toBe(1);
    expect(JSON.parse(change?.other_info ?? '')).toEqual({});
    const next = JSON.parse(change?.channel_info ?? '');
    expect(next.multi_key_status_list).toEqual({ '0': 3, '1': 2 });
    expect(next.multi_key_disabled_time).toEqual({ '0': 5 });
    expect(autoDisabledKeys(change?.channel_info ?? '')).toEqual([{ index: 0, since: 5 }]);
  });

  it('enables a key of an enabled channel, and never a key disabled by hand', () => {
    const enabled = row({ status: 1, channel_info: JSON.stringify(info) });
    expect(JSON.parse(afterKeyRecovery(enabled, 0)?.channel_info ?? '').multi_key_status_list).toEqual({
      '1': 2,
      '2': 3,
    });
    expect(afterKeyRecovery(enabled, 1)).toBeUndefined();
    expect(afterKeyRecovery(disabled, 1)).toBeUndefined();
    expect(afterKeyRecovery(row({ status: 2, channel_info: JSON.stringify(info) }), 0)).toBeUndefined();
  });

  it('lists the keys the gateway disabled', () => {
    expect(autoDisabledKeys(JSON.stringify(info))).toEqual([
      { index: 0, since: 5 },
      { index: 2, since: 6 },
    ]);
    expect(autoDisabledKeys(JSON.stringify(channelInfoFor(1)))).toEqual([]);
  });
});

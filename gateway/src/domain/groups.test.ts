import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../tests/support/database.ts';
import { createMemoryClusterState } from '../cluster/index.ts';
import type { Store } from '../store/index.ts';
import { usableGroups } from './groups.ts';
import { OptionsService } from './options/index.ts';

let store: Store;
let dispose: () => Promise<void>;
let options: OptionsService;

beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
  options = await OptionsService.start({ db: store.db, bus: createMemoryClusterState().bus, syncIntervalMs: 60_000 });
});
afterAll(async () => {
  await options?.close();
  await dispose?.();
});

describe('usable groups', () => {
  it('follows every change of the options it is computed from, and is computed once in between', async () => {
    const first = usableGroups(options, 'default');
    expect(first).toEqual({ default: { desc: '默认分组', ratio: 1 }, vip: { desc: 'vip分组', ratio: 1 } });
    expect(usableGroups(options, 'default')).toBe(first);
    expect(usableGroups(options, 'svip')).toEqual({ ...first, svip: { desc: 'svip', ratio: 1 } });

    await options.set('group_ratio_setting.group_special_usable_group', '{"default": {"-:vip": "", "+:beta": "Beta"}}');
    expect(usableGroups(options, 'default')).toEqual({
      default: { desc: '默认分组', ratio: 1 },
      beta: { desc: 'Beta', ratio: 1 },
    });
    await options.set('GroupRatio', '{"default": 1, "beta": 0.5}');
    expect(usableGroups(options, 'default').beta).toEqual({ desc: 'Beta', ratio: 0.5 });
    await options.set('UserUsableGroups', '{"default": "Everyone"}');
    expect(usableGroups(options, 'default').default).toEqual({ desc: 'Everyone', ratio: 1 });
    expect(usableGroups(options, 'vip')).toEqual({
      default: { desc: 'Everyone', ratio: 1 },
      vip: { desc: 'vip', ratio: 1 },
    });
  });
});

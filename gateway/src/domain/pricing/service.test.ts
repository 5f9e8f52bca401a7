import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { createMemoryClusterState } from '../../cluster/index.ts';
import type { Store } from '../../store/index.ts';
import { OptionsService } from '../options/index.ts';
import { PricingService } from './service.ts';

let store: Store;
let dispose: () => Promise<void>;
let options: OptionsService;
let pricing: PricingService;

beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
  const bus = createMemoryClusterState().bus;
  options = await OptionsService.start({ db: store.db, bus, syncIntervalMs: 60_000 });
  pricing = await PricingService.start({ db: store.db, options, bus });
});
afterAll(async () => {
  await pricing?.close();
  await options?.close();
  await dispose?.();
});

describe('price maps', () => {
  it('are built once, and again after an option or a model price row changes', async () => {
    const first = pricing.maps();
    expect(pricing.maps()).toBe(first);
    expect(Object.isFrozen(first.ModelRatio)).toBe(true);

    await options.set('ModelRatio', JSON.stringify({ 'cached-model': 4 }));
    const second = pricing.maps();
    expect(second).not.toBe(first);
    expect(second.ModelRatio).toEqual({ 'cached-model': 4 });
    expect(pricing.maps()).toBe(second);

    await store.db
      .insertInto('model_prices')
      .values({ model: 'cached-model', model_ratio: 9, completion_ratio: 2, updated_at: 1, managed_by: 'operator' })
      .execute();
    await pricing.reload();
    expect(pricing.maps().ModelRatio).toEqual({ 'cached-model': 9 });
    expect(pricing.maps().CompletionRatio['cached-model']).toBe(2);
  });
});

describe('billing expressions of ModelPrice resources', () => {
  it('are laid over billing_setting for every reader, and administrators cannot change them there', async () => {
    await options.set('billing_setting.billing_mode', JSON.stringify({ 'admin-model': 'tiered_expr', owned: 'x' }));
    await options.set('billing_setting.billing_expr', JSON.stringify({ 'admin-model': 'p * 1', owned: 'p * 9' }));
    await store.db
      .insertInto('model_prices')
      .values([
        {
          model: 'owned',
          billing_expr: 'tier("base", p * 2)',
          updated_at: 1,
          managed_by: 'operator',
          managed_uid: 'u1',
        },
        { model: 'admin-model', model_ratio: 3, updated_at: 1, managed_by: 'operator', managed_uid: 'u2' },
      ])
      .execute();
    await pricing.reload();
    // A row with an expression puts its model in tiered_expr mode; a row priced by ratio takes it out.
    expect(options.getJson('billing_setting.billing_mode')).toEqual({ owned: 'tiered_expr' });
    expect(options.getJson('billing_setting.billing_expr')).toEqual({ owned: 'tier("base", p * 2)' });
    expect(() =>
      pricing.assertOptionEditAllowed('billing_setting.billing_expr', JSON.stringify({ owned: 'p * 1' })),
    ).toThrow(expect.objectContaining({ code: 'MANAGED_BY_RESOURCE' }));
    expect(() =>
      pricing.assertOptionEditAllowed('billing_setting.billing_mode', JSON.stringify({ owned: 'tiered_expr' })),
    ).not.toThrow();
    expect(() =>
      pricing.assertOptionEditAllowed('billing_setting.billing_mode', JSON.stringify({ 'admin-model': 'tiered_expr' })),
    ).toThrow(expect.objectContaining({ code: 'MANAGED_BY_RESOURCE' }));

    await store.db.deleteFrom('model_prices').where('model', 'in', ['owned', 'admin-model']).execute();
    await pricing.reload();
    expect(options.getJson('billing_setting.billing_expr')).toEqual({ 'admin-model': 'p * 1', owned: 'p * 9' });
  });
});

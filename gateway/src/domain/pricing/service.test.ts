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

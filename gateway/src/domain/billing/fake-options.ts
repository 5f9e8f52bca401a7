import type { BillingOptions } from './options.ts';

// Fixed, explicit values rather than the product defaults, so that a test's arithmetic does not
// move when a default does.
const BASE: Readonly<Record<string, unknown>> = {
  QuotaPerUnit: 500000,
  PreConsumedQuota: 500,
  SelfUseModeEnabled: false,
  GroupRatio: { default: 1, vip: 1 },
  GroupGroupRatio: {},
  ImageRatio: {},
  AudioRatio: {},
  AudioCompletionRatio: {},
  'billing_setting.billing_mode': {},
  'billing_setting.billing_expr': {},
  'billing_setting.timezone': 'UTC',
  'tool_price_setting.prices': {
    web_search: 10,
    web_search_preview: 10,
    'web_search_preview:gpt-4o*': 25,
    file_search: 2.5,
    google_search: 14,
  },
};

/** Every key fakeOptions holds, for a test to check against the real option definitions. */
export const FAKE_OPTION_KEYS: readonly string[] = Object.keys(BASE);

/**
 * An in-memory BillingOptions for tests. Reading a key it does not hold throws, as OptionsService
 * does for an unknown key.
 */
export function fakeOptions(overrides: Record<string, unknown> = {}): BillingOptions {
  const values: Record<string, unknown> = { ...BASE, ...overrides };
  const read = (key: string): unknown => {
    if (!Object.hasOwn(values, key)) throw new Error(`unknown option ${key}`);
    return values[key];
  };
  return {
    get: (key) => read(key) as string,
    getNumber: (key) => read(key) as number,
    getBoolean: (key) => read(key) as boolean,
    getJson: <T>(key: string) => read(key) as T,
  };
}

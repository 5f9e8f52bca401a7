import { StoreUnavailableError } from '../store/unavailable.ts';
import type { KeyValueStore } from './types.ts';

/**
 * Short-lived values (verification codes, OAuth state) whose failures while Redis is unreachable are
 * StoreUnavailableError: the /api caller gets a 503 with Retry-After rather than a 500. Bad arguments
 * (RangeError) stay as they are.
 */
export function kvUnavailableAs503(kv: KeyValueStore): KeyValueStore {
  const mapped = <T>(call: () => Promise<T>): Promise<T> =>
    call().catch((err: unknown) => {
      throw err instanceof RangeError || err instanceof TypeError ? err : new StoreUnavailableError(err);
    });
  return {
    set: (key, value, ttlMs) => mapped(() => kv.set(key, value, ttlMs)),
    setIfAbsent: (key, value, ttlMs) => mapped(() => kv.setIfAbsent(key, value, ttlMs)),
    get: (key) => mapped(() => kv.get(key)),
    take: (key) => mapped(() => kv.take(key)),
    delete: (key) => mapped(() => kv.delete(key)),
    ttl: (key) => mapped(() => kv.ttl(key)),
  };
}

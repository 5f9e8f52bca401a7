import { createMemoryClusterState } from './memory.ts';
import { createRedisClusterState } from './redis.ts';
import type { ClusterState } from './types.ts';

export type { MemoryClusterState, MemoryClusterStateOptions } from './memory.ts';
export { createMemoryClusterState } from './memory.ts';
export type { RedisClusterStateOptions } from './redis.ts';
export { createRedisClusterState } from './redis.ts';
export type { OnePodJob, RunOnOnePodOptions } from './run-on-one-pod.ts';
export { runOnOnePod } from './run-on-one-pod.ts';
export type {
  BudgetAdmission,
  BudgetCharge,
  Bus,
  CappedMaps,
  ClusterState,
  KeyValueStore,
  Lease,
  Locks,
  SlidingWindowCounters,
  WindowBudgets,
} from './types.ts';

export interface ClusterStateOptions {
  /** Unset means in-process state: correct for one pod only. */
  redisUrl?: string | undefined;
  /** Prefix of every Redis key and channel; in-process, instances with one namespace share state. */
  namespace: string;
  /** Redis connection errors after startup. */
  onError?: (err: Error) => void;
}

/** Redis when a URL is given (rejecting if it does not answer), in-process state otherwise. */
export async function createClusterState(options: ClusterStateOptions): Promise<ClusterState> {
  const { redisUrl, namespace, onError } = options;
  if (!redisUrl) return createMemoryClusterState({ namespace });
  return createRedisClusterState({ url: redisUrl, namespace, onError });
}

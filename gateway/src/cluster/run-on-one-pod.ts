import { warn } from './shared.ts';
import type { ClusterState, Lease } from './types.ts';

export interface RunOnOnePodOptions {
  /** Name of the lease; every pod running the same job must use the same name. */
  name: string;
  /** How often to take or renew the lease and, while held, run the job. */
  intervalMs: number;
  /** Lease time to live: longer than `intervalMs`, so the holder renews before it lapses. */
  ttlMs: number;
  /** Errors of the job and of the lease calls; a process warning by default. */
  onError?: (err: unknown) => void;
}

export interface OnePodJob {
  /** Stops scheduling, waits for a running job (its signal is aborted), releases the lease. */
  stop(): Promise<void>;
}

/**
 * Runs a periodic background job on one pod at a time. Every `intervalMs` each pod tries to take
 * (or renew) the lease `name`; the holder runs `job` unless its previous run is still going, so
 * runs never overlap on one pod. The job's signal is aborted when the lease is lost or on stop:
 * a long job should check it, because another pod may take over once the lease has lapsed.
 */
export function runOnOnePod(
  cluster: ClusterState,
  options: RunOnOnePodOptions,
  job: (signal: AbortSignal) => Promise<void>,
): OnePodJob {
  const { name, intervalMs, ttlMs } = options;
  if (!(intervalMs > 0) || !(ttlMs > intervalMs)) {
    throw new RangeError(`runOnOnePod(${name}): need 0 < intervalMs < ttlMs, got ${intervalMs} and ${ttlMs}`);
  }
  const onError = options.onError ?? ((err: unknown) => warn(`background job ${name}`, err));
  let lease: Lease | null = null;
  let controller: AbortController | null = null;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let stopping: Promise<void> | undefined;

  const lose = () => {
    lease = null;
    controller?.abort(new Error(`lost the lease ${name}`));
  };

  /** True while this pod holds the lease; any failure counts as not holding it. */
  const holdLease = async (): Promise<boolean> => {
    try {
      if (lease && (await lease.renew(ttlMs))) return true;
      if (lease) lose();
      lease = await cluster.locks.acquire(name, ttlMs);
      return lease !== null;
    } catch (err) {
      lose();
      onError(err);
      return false;
    }
  };

  const start = () => {
    const own = new AbortController();
    controller = own;
    running = Promise.resolve()
      .then(() => job(own.signal))
      .catch(onError)
      .finally(() => {
        running = null;
      });
  };

  const tick = async (): Promise<void> => {
    const held = await holdLease();
    if (stopped) return;
    if (held && !running) start();
    timer = setTimeout(() => {
      ticking = tick();
    }, intervalMs);
    // A background job must never keep the process alive.
    timer.unref();
  };

  let ticking = tick();

  const shutdown = async () => {
    stopped = true;
    clearTimeout(timer);
    await ticking;
    controller?.abort(new Error(`stopping ${name}`));
    await running;
    const held = lease;
    lease = null;
    if (held) await held.release().catch(onError);
  };

  return {
    stop() {
      stopping ??= shutdown();
      return stopping;
    },
  };
}

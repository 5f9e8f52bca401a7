import { setTimeout as sleep } from 'node:timers/promises';
import { httpStatus, type LeaseObject } from './client.ts';

/** The Lease calls the elector makes (KubeClient's; a fake in unit tests). */
export interface LeaseApi {
  readLease(namespace: string, name: string, signal?: AbortSignal): Promise<LeaseObject | undefined>;
  createLease(namespace: string, lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject>;
  replaceLease(namespace: string, lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject>;
}

export interface LeaderElectorOptions {
  api: LeaseApi;
  namespace: string;
  name: string;
  identity: string;
  /** How long a holder's claim lasts after its last renewal (controller-runtime: 15 s). */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long (10 s). */
  renewDeadlineMs?: number;
  /** How often candidates try and the leader renews (2 s). */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  /** Awaited before the Lease is released, so work stops before another process may start. */
  onStoppedLeading: () => Promise<void> | void;
  logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  clock?: () => number;
}

/** Kubernetes MicroTime: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Rejects when `signal` aborts, even if `call` itself ignores the signal. */
function bounded<T>(call: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    call.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * Leader election on a coordination.k8s.io Lease, as client-go does it: the Lease's resourceVersion
 * is the lock (every write is conditional), the leader renews every retry period, candidates take
 * the Lease once its holder let it lapse for a lease duration, and a leader that cannot renew within
 * the renew deadline steps down. On stop the leader releases the Lease (empty holder), so a
 * successor takes over at its next try instead of after a lease duration.
 *
 * Expiry is judged by this process's clock only: from the local time it last saw the record
 * (holder, renewTime, transitions) change — never by comparing the remote renewTime with the local
 * clock, which another node's clock skew would make wrong. Every Lease call is bounded: a leader's by
 * what is left of its renew deadline, a candidate's by the renew deadline, so an API call that hangs
 * cannot keep a stale leader leading.
 */
export class LeaderElector {
  readonly #options: Required<Omit<LeaderElectorOptions, 'logger'>> & Pick<LeaderElectorOptions, 'logger'>;
  #leading = false;
  #lastRenewal = 0;
  #observed = '';
  #observedAt = 0;
  #stopped = false;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    this.#options = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      clock: Date.now,
      ...options,
    };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops trying; a leader stops its work (onStoppedLeading) and then releases the Lease. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    await this.#loop;
    if (this.#leading) {
      this.#leading = false;
      await this.#options.onStoppedLeading();
      await this.#release().catch((error: unknown) =>
        this.#options.logger?.warn({ err: error }, 'Could not release the leader Lease'),
      );
    }
  }

  async #run(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs, clock, logger, identity, name } = this.#options;
    while (!this.#stopped) {
      let held = false;
      // What is left of the renew deadline bounds a leader's try (real time; the clock judges expiry).
      const left = this.#leading ? renewDeadlineMs - (clock() - this.#lastRenewal) : renewDeadlineMs;
      const signal = AbortSignal.any([this.#abort.signal, AbortSignal.timeout(Math.max(1, left))]);
      try {
        held = await this.#tryAcquireOrRenew(signal);
      } catch (error) {
        logger?.warn({ err: error, lease: name }, 'Could not read or write the leader Lease');
      }
      if (this.#stopped) break;
      const now = clock();
      if (held) {
        this.#lastRenewal = now;
        if (!this.#leading) {
          this.#leading = true;
          logger?.info({ identity, lease: name }, 'Became the leader');
          this.#options.onStartedLeading();
        }
      } else if (this.#leading && (this.#lostToAnother || now - this.#lastRenewal > renewDeadlineMs)) {
        this.#leading = false;
        logger?.warn({ identity, lease: name }, 'Lost the leader Lease; stopped reconciling');
        await this.#options.onStoppedLeading();
      }
      // Candidates spread their tries a little, so that they do not all knock at once.
      const wait = this.#leading ? retryPeriodMs : retryPeriodMs * (1 + Math.random() * 0.2);
      await sleep(wait, undefined, { signal: this.#abort.signal }).catch(() => {});
    }
  }

  /** Set when the last try found another live holder (a leader must then stop at once). */
  #lostToAnother = false;

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { api, namespace, name, identity, leaseDurationMs, clock } = this.#options;
    this.#lostToAnother = false;
    const now = clock();
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.round(leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    const current = await bounded(api.readLease(namespace, name, signal), signal);
    if (!current) {
      try {
        const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec };
        await bounded(api.createLease(namespace, lease, signal), signal);
        return true;
      } catch (error) {
        if (httpStatus(error) === 409) return false;
        throw error;
      }
    }
    const record = current.spec ?? {};
    const fingerprint = JSON.stringify([record.holderIdentity, record.renewTime, record.leaseTransitions]);
    if (fingerprint !== this.#observed) {
      this.#observed = fingerprint;
      this.#observedAt = now;
    }
    const holder = record.holderIdentity ?? '';
    if (holder !== '' && holder !== identity) {
      const duration = (record.leaseDurationSeconds ?? leaseDurationMs / 1000) * 1000;
      if (now < this.#observedAt + duration) {
        this.#lostToAnother = this.#leading;
        return false;
      }
    }
    const mine = holder === identity;
    const next: LeaseObject = {
      ...current,
      spec: {
        ...record,
        ...spec,
        acquireTime: mine ? (record.acquireTime ?? spec.acquireTime) : spec.acquireTime,
        leaseTransitions: mine ? (record.leaseTransitions ?? 0) : (record.leaseTransitions ?? 0) + (holder ? 1 : 0),
      },
    };
    try {
      const written = await bounded(api.replaceLease(namespace, next, signal), signal);
      this.#observed = JSON.stringify([
        written.spec?.holderIdentity,
        written.spec?.renewTime,
        written.spec?.leaseTransitions,
      ]);
      this.#observedAt = now;
      return true;
    } catch (error) {
      if (httpStatus(error) === 409) return false;
      throw error;
    }
  }

  /** Hands the Lease back: no holder, so the next candidate takes it at once. */
  async #release(): Promise<void> {
    const { api, namespace, name, identity, clock, renewDeadlineMs } = this.#options;
    const signal = AbortSignal.timeout(renewDeadlineMs);
    const current = await bounded(api.readLease(namespace, name, signal), signal);
    if (!current || current.spec?.holderIdentity !== identity) return;
    const now = microTime(clock());
    const released = {
      ...current,
      spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    await bounded(api.replaceLease(namespace, released, signal), signal);
    this.#options.logger?.info({ identity, lease: name }, 'Released the leader Lease');
  }
}

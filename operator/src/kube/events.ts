import { randomBytes } from 'node:crypto';
import { describeError, type EventObject, type KubeClient, type Resource } from './client.ts';
import { microTime } from './leader.ts';

/** The controller name Events are reported under. */
export const REPORTING_CONTROLLER = 'tollgate.dev/operator';

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, stable: what dashboards and `kubectl get events --field-selector reason=…` use. */
  reason: string;
  note: string;
  /** What the operator was doing: `Reconcile` or `Finalize`. */
  action?: string;
}

export interface EventRecorderOptions {
  kube: Pick<KubeClient, 'createEvent' | 'patchEvent'>;
  /** This process's identity (reportingInstance). */
  instance: string;
  logger?: { warn(obj: object, msg: string): void };
  /** A repeat within this time only counts; after it, the Event's series is written again. Default 5 min. */
  seriesIntervalMs?: number;
  clock?: () => number;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
  writtenAt: number;
  /** Set while the create call runs: repeats meanwhile only count. */
  pending: boolean;
}

const MAX_TRACKED = 4096;

/**
 * events.k8s.io/v1 Events about resources, aggregated as client-go's event library does: the first
 * occurrence of (resource, type, reason) creates an Event; repeats raise its `series.count`, which is
 * written at most once per interval, so a resource failing in a loop yields one Event, not thousands.
 * Recording never blocks nor fails a reconcile: a failed write is logged and dropped.
 */
export class EventRecorder {
  readonly #options: EventRecorderOptions;
  readonly #seen = new Map<string, Seen>();

  constructor(options: EventRecorderOptions) {
    this.#options = options;
  }

  /** Records the event; resolves when its write (if any) is done. */
  async record(resource: Resource, event: EventInput): Promise<void> {
    const { kube, logger, seriesIntervalMs = 300_000, clock = Date.now } = this.#options;
    const namespace = resource.metadata.namespace ?? '';
    const key = `${resource.metadata.uid ?? `${namespace}/${resource.metadata.name}`}|${event.type}|${event.reason}`;
    const now = clock();
    const seen = this.#seen.get(key);
    try {
      if (seen) {
        seen.count++;
        if (seen.pending || now - seen.writtenAt < seriesIntervalMs) return;
        seen.writtenAt = now;
        await kube.patchEvent(seen.namespace, seen.name, {
          series: { count: seen.count, lastObservedTime: microTime(now) },
        });
        return;
      }
      const name = `${resource.metadata.name}.${randomBytes(8).toString('hex')}`;
      const entry: Seen = { namespace, name, count: 1, writtenAt: now, pending: true };
      this.#remember(key, entry);
      await kube.createEvent(namespace, this.#event(resource, name, event, now));
      entry.pending = false;
    } catch (error) {
      // A lost Event is no reason to fail a reconcile; the next occurrence tries again.
      this.#seen.delete(key);
      logger?.warn({ reason: event.reason, err: describeError(error) }, 'Could not record an Event');
    }
  }

  /** Forgets the resource's events (it is gone). */
  forget(uid: string): void {
    for (const key of this.#seen.keys()) if (key.startsWith(`${uid}|`)) this.#seen.delete(key);
  }

  #remember(key: string, entry: Seen): void {
    if (this.#seen.size >= MAX_TRACKED) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    this.#seen.set(key, entry);
  }

  #event(resource: Resource, name: string, event: EventInput, now: number): EventObject {
    const namespace = resource.metadata.namespace ?? '';
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.#options.instance.slice(0, 128),
      action: event.action ?? 'Reconcile',
      reason: event.reason.slice(0, 128),
      regarding: {
        apiVersion: resource.apiVersion ?? '',
        kind: resource.kind ?? '',
        namespace,
        name: resource.metadata.name,
        ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}),
      },
      note: event.note.length <= 1024 ? event.note : `${event.note.slice(0, 1023)}…`,
      type: event.type,
    };
  }
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Result label of tollgate_operator_reconcile_total. */
export type ReconcileResult = 'ok' | 'error' | 'requeue';

/**
 * Every metric the operator exports. The names are fixed: the Grafana dashboards in deploy/grafana
 * and the alert rules query exactly these.
 */
export interface OperatorMetrics {
  registry: Registry;
  reconciles: Counter<'kind' | 'result'>;
  reconcileErrors: Counter<'kind'>;
  reconcileDuration: Histogram<'kind'>;
  queueDepth: Gauge;
  informerRestarts: Counter<'kind'>;
  isLeader: Gauge;
  listErrors: Counter<'kind' | 'reason'>;
  /** Records that the informer of `kind` delivered an event (or finished a list) now. */
  informerEvent(kind: string): void;
  /** Counts a failed list or watch of `kind` by its HTTP status. */
  listError(kind: string, status: number | undefined): void;
  /** Where tollgate_operator_informer_synced reads each kind's state from at scrape time. */
  watchInformers(source: () => Iterable<readonly [string, boolean]>): void;
}

/** The `reason` label of tollgate_operator_list_errors_total. */
export function listErrorReason(status: number | undefined): 'forbidden' | 'not_found' | 'other' {
  return status === 403 ? 'forbidden' : status === 404 ? 'not_found' : 'other';
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): OperatorMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const lastEvent = new Map<string, number>();
  let informers: () => Iterable<readonly [string, boolean]> = () => [];
  const metrics: OperatorMetrics = {
    registry,
    reconciles: new Counter({
      name: 'tollgate_operator_reconcile_total',
      help: 'Reconciles by kind and result: ok (converged), requeue (spec problem, retried with backoff), error (failed).',
      labelNames: ['kind', 'result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'tollgate_operator_reconcile_errors_total',
      help: 'Reconciles that failed with an error (API server or database), by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'tollgate_operator_reconcile_duration_seconds',
      help: 'Time one reconcile took, by kind.',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'tollgate_operator_queue_depth',
      help: 'Resources waiting in the work queue to be reconciled.',
      registers: [registry],
    }),
    informerRestarts: new Counter({
      name: 'tollgate_operator_informer_restarts_total',
      help: 'Times an informer stopped on an error and was restarted, by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    isLeader: new Gauge({
      name: 'tollgate_operator_is_leader',
      help: '1 while this process holds the leader Lease and reconciles, else 0.',
      registers: [registry],
    }),
    listErrors: new Counter({
      name: 'tollgate_operator_list_errors_total',
      help: 'Failed list or watch calls of an informer, by kind and reason: forbidden (403, RBAC), not_found (404, CRD missing), other.',
      labelNames: ['kind', 'reason'],
      registers: [registry],
    }),
    informerEvent(kind: string) {
      lastEvent.set(kind, Date.now());
    },
    listError(kind, status) {
      metrics.listErrors.inc({ kind, reason: listErrorReason(status) });
    },
    watchInformers(source) {
      informers = source;
    },
  };
  new Gauge({
    name: 'tollgate_operator_informer_synced',
    help: "1 when the kind's informers have listed successfully and their caches are synced, else 0.",
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, synced] of informers()) this.set({ kind }, synced ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tollgate_operator_last_event_age_seconds',
    help: 'Seconds since the informer of a kind last delivered an event or finished a list.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const now = Date.now();
      for (const [kind, at] of lastEvent) this.set({ kind }, (now - at) / 1000);
    },
  });
  metrics.isLeader.set(0);
  metrics.queueDepth.set(0);
  return metrics;
}

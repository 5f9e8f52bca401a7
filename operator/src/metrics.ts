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
  /** 1 when the informer of a kind has listed successfully and its cache is synced, else 0. */
  informerSynced: Gauge<'kind'>;
  /** Failed list/watch calls by kind and reason: forbidden, not_found or other. */
  listErrors: Counter<'kind' | 'reason'>;
  isLeader: Gauge;
  /** Records that the informer of `kind` delivered an event (or finished a list) now. */
  informerEvent(kind: string): void;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): OperatorMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const lastEvent = new Map<string, number>();
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
    informerSynced: new Gauge({
      name: 'tollgate_operator_informer_synced',
      help: '1 when the informer of a kind has listed successfully and its cache is synced, else 0.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    listErrors: new Counter({
      name: 'tollgate_operator_list_errors_total',
      help: 'Failed list and watch calls by kind and reason (forbidden, not_found, other).',
      labelNames: ['kind', 'reason'],
      registers: [registry],
    }),
    isLeader: new Gauge({
      name: 'tollgate_operator_is_leader',
      help: '1 while this process holds the leader Lease and reconciles, else 0.',
      registers: [registry],
    }),
    informerEvent(kind: string) {
      lastEvent.set(kind, Date.now());
    },
  };
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

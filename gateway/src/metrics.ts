import { type Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The Prometheus registry and every metric the gateway exports. One per app, so tests can build several. */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  /** 1 when a dependency (database, redis) answered its last check, else 0; set by PodHealth. */
  dependencyUp: Gauge<'dependency'>;
}

export function createMetrics(labels: { version: string; node: string }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ node: labels.node });
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests served by the gateway, by route template, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  // Constant 1, labelled with the version: dashboards join on it to show which pods run what.
  new Gauge({
    name: 'tollgate_build_info',
    help: 'Build information of the running gateway; always 1.',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: labels.version }, 1);
  const dependencyUp = new Gauge({
    name: 'tollgate_dependency_up',
    help: 'Whether a dependency of the gateway (database, redis) answered its last health check: 1 or 0.',
    labelNames: ['dependency'] as const,
    registers: [registry],
  });
  return { registry, httpDuration, dependencyUp };
}

/**
 * A metric's children by their label values, each made on first use. prom-client's `labels()` binds
 * the label object once; calling `inc`/`observe` with an object instead builds one (and, for a
 * histogram, a closure) on every call. The last values asked for are compared first: consecutive
 * requests mostly share their labels, and comparing them costs less than joining them into a key.
 */
export function labelled<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const children = new Map<string, T>();
  let lastValues: string[] | undefined;
  let lastChild: T | undefined;
  return (...values) => {
    if (lastValues !== undefined && sameValues(lastValues, values)) return lastChild as T;
    const key = values.join('\u0000');
    let child = children.get(key);
    if (child === undefined) {
      child = make(...values);
      children.set(key, child);
    }
    lastValues = values;
    lastChild = child;
    return child;
  };
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One series of a histogram: its label values bound. */
export interface HistogramSeries {
  observe(value: number): void;
}

/** One series of a counter: its label values bound. */
export interface CounterSeries {
  inc(value?: number): void;
}

/**
 * The series of prom-client's metric objects, as they keep them: one entry per label set, under a key
 * made of the sorted label names and values. Read here so that the hot path updates its series' entry
 * in place; a key that prom-client no longer makes the same way is never found, and every call then
 * goes through prom-client's own method (slower, still right).
 */
interface SeriesStore<Entry> {
  hashMap: Record<string, Entry | undefined>;
  sortedLabelNames: string[];
}
type HistogramEntry = { sum: number; count: number; bucketValues: { [bound: string]: number } };
type CounterEntry = { value: number };

/** The key prom-client files a label set's entry under (util.js hashObject with the sorted names). */
function seriesKey(store: SeriesStore<unknown>, labels: Record<string, string>): string {
  let key = '';
  for (const name of store.sortedLabelNames) key += `${name}:${labels[name]},`;
  return key;
}

function labelsOf(names: readonly string[], values: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((name, i) => {
    labels[name] = values[i] as string;
  });
  return labels;
}

/**
 * A histogram's series by label values (in the order of its label names). prom-client's observe
 * validates the labels, hashes them and looks the bucket up by a string key on every call; here the
 * series' entry is found by a key made once, and the bucket by the index of its bound. The first
 * observation of a series (and any after a reset) goes through prom-client, which makes the entry;
 * the exposition is prom-client's, the same either way.
 */
export function histogramSeries(
  histogram: Histogram<string>,
  labelNames: readonly string[],
): (...values: string[]) => HistogramSeries {
  const store = histogram as unknown as SeriesStore<HistogramEntry> & { upperBounds: readonly number[] };
  const bounds = store.upperBounds;
  const boundKeys = bounds.map(String);
  return labelled((...values) => {
    const labels = labelsOf(labelNames, values);
    const key = seriesKey(store, labels);
    return {
      observe(value) {
        const entry = store.hashMap[key];
        if (entry === undefined || !Number.isFinite(value)) {
          histogram.observe(labels, value);
          return;
        }
        entry.sum += value;
        entry.count += 1;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= (bounds[i] as number)) {
            const bound = boundKeys[i] as string;
            entry.bucketValues[bound] = (entry.bucketValues[bound] as number) + 1;
            break;
          }
        }
      },
    };
  });
}

/** A counter's series by label values: the same as histogramSeries, for `inc`. */
export function counterSeries(
  counter: Counter<string>,
  labelNames: readonly string[],
): (...values: string[]) => CounterSeries {
  const store = counter as unknown as SeriesStore<CounterEntry>;
  return labelled((...values) => {
    const labels = labelsOf(labelNames, values);
    const key = seriesKey(store, labels);
    return {
      inc(value = 1) {
        const entry = store.hashMap[key];
        // prom-client refuses what is not a finite, non-negative number: let it say so.
        if (entry === undefined || !(Number.isFinite(value) && value >= 0)) counter.inc(labels, value);
        else entry.value += value;
      },
    };
  });
}

import type { Gauge } from 'prom-client';
import type { NewerMigration } from './store/index.ts';
import { StoreUnavailableError } from './store/unavailable.ts';

/** What /readyz answers: the pod's own state, never its dependencies'. */
export type Readiness = 'ok' | 'unavailable' | 'draining' | 'waiting-for-schema';

export interface DependencyCheck {
  name: string;
  /** Throws when the dependency does not answer. */
  check(): Promise<void>;
}

export interface HealthDetails {
  status: Readiness;
  /** 'ok' or the error text, per dependency. */
  dependencies: Record<string, string>;
  schema?: SchemaSummary;
}

export interface SchemaSummary {
  /** Migrations this gateway needs that the database lacks. */
  pending: string[];
  /** Migrations in the database this gateway does not know (all `expand`, or it would not run). */
  newer: NewerMigration[];
}

type Phase = 'starting' | 'waiting-for-schema' | 'serving' | 'draining';

/**
 * The pod's health as the probes and operators see it. Readiness follows the pod (started, schema ready,
 * not draining) so that a short Postgres or Redis outage does not take every pod out of the Service at
 * once; dependency state goes to /health/details and the tollgate_dependency_up gauge instead.
 */
export class PodHealth {
  #phase: Phase = 'starting';
  #checks: DependencyCheck[] = [];
  #schema: SchemaSummary | undefined;

  readonly #dependencyUp: Gauge<'dependency'>;
  readonly #timeoutMs: number;

  constructor(dependencyUp: Gauge<'dependency'>, timeoutMs = 2000) {
    this.#dependencyUp = dependencyUp;
    this.#timeoutMs = timeoutMs;
  }

  addDependency(check: DependencyCheck): void {
    this.#checks.push(check);
  }

  schemaChecked(schema: SchemaSummary): void {
    this.#schema = { pending: schema.pending, newer: schema.newer };
    if (schema.pending.length > 0 && this.#phase === 'starting') this.#phase = 'waiting-for-schema';
  }

  serving(): void {
    this.#phase = 'serving';
  }

  draining(): void {
    this.#phase = 'draining';
  }

  get isDraining(): boolean {
    return this.#phase === 'draining';
  }

  readiness(): Readiness {
    switch (this.#phase) {
      case 'serving':
        return 'ok';
      case 'starting':
        return 'unavailable';
      default:
        return this.#phase;
    }
  }

  /** Asks every dependency now (each bounded by the timeout) and updates the gauge. */
  async details(): Promise<HealthDetails> {
    const dependencies: Record<string, string> = {};
    await Promise.all(
      this.#checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), this.#timeoutMs);
          dependencies[name] = 'ok';
        } catch (error) {
          // The database's own words, not the "retry later" a user is shown.
          const shown = error instanceof StoreUnavailableError && error.cause instanceof Error ? error.cause : error;
          dependencies[name] = shown instanceof Error ? shown.message || shown.name : String(shown);
        }
        this.#dependencyUp.set({ dependency: name }, dependencies[name] === 'ok' ? 1 : 0);
      }),
    );
    return { status: this.readiness(), dependencies, ...(this.#schema ? { schema: this.#schema } : {}) };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

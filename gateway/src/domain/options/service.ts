import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  type BooleanOptionKey,
  findOptionDefinition,
  type JsonOptionKey,
  type NumericOptionKey,
  OPTION_DEFINITIONS,
  type OptionKey,
  type OptionType,
} from './definitions.ts';
import { optionErrors as E } from './errors.ts';
import { validateOption } from './validate.ts';

/** The bus channel on which a pod announces the option keys it changed. */
export const OPTIONS_CHANNEL = 'options';

/** The subset of pino's logger the service uses. */
export interface OptionsLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OptionsServiceConfig {
  db: Kysely<Database>;
  bus: Bus;
  /** Safety net: every pod re-reads all options this often, even if it missed a bus message. */
  syncIntervalMs: number;
  logger?: OptionsLogger;
}

/** The Kubernetes resource that declares an option (DESIGN.md §4). */
export interface ManagedResource {
  namespace: string;
  name: string;
  uid: string;
}

export interface SetOptionOptions {
  /** The owner of the write (the operator); required to change an option a resource manages. */
  managedBy?: string;
  /** With `managedBy`: marks the rows as managed by this resource. */
  resource?: ManagedResource;
  /** Other writes that must commit or fail with these options, run first in the same transaction. */
  alongside?: (trx: Transaction<Database>) => Promise<void>;
}

export interface OptionChange {
  key: OptionKey;
  value: string;
  previous: string;
  /** 'local' when this process wrote it, 'remote' when read back after another pod's write. */
  source: 'local' | 'remote';
}

export type OptionChangeListener = (change: OptionChange) => void;

export type OptionEntries = Readonly<Record<string, string>> | ReadonlyArray<{ key: string; value: string }>;

/** What a typed getter resolved an option to: integer and number options both read as numbers. */
type ResolvedType = 'boolean' | 'number' | 'json';

interface BusMessage {
  origin: string;
  keys: string[];
}

const silent: OptionsLogger = { warn() {}, error() {} };

/**
 * Options as every module reads them: an in-memory copy of the `options` table over the defaults.
 *
 * Consistency across pods: a write commits to the database, updates this pod's copy, and names
 * the changed keys on the bus; every other pod re-reads those rows (values never travel on the
 * bus, so secrets stay out of Redis and the database stays the only truth). Each apply carries a
 * ticket taken before its read, and a key only moves to a newer ticket, so a slow read can never
 * overwrite a fresher value. A full re-read every `syncIntervalMs` repairs anything missed.
 */
export class OptionsService {
  readonly #db: Kysely<Database>;
  readonly #bus: Bus;
  readonly #logger: OptionsLogger;
  readonly #syncIntervalMs: number;
  /** Tells this pod's own bus messages apart from other pods'. */
  readonly #instanceId = randomUUID();
  readonly #values = new Map<string, string>();
  /**
   * Each option as its typed getter returns it, resolved on the first read after the option (or its
   * overlay) changed: a read on the relay path is one map lookup, not a definition lookup and a parse.
   */
  readonly #resolved = new Map<string, { type: ResolvedType; value: unknown }>();
  /** Values declared elsewhere (custom resources) laid over JSON options for readers. */
  readonly #overlays = new Map<string, (value: unknown) => unknown>();
  readonly #tickets = new Map<string, number>();
  readonly #listeners = new Set<OptionChangeListener>();
  /** Problems already logged, so that the periodic sync does not repeat them every minute. */
  readonly #reported = new Set<string>();
  #ticket = 0;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #syncing: Promise<void> | undefined;
  #closed = false;

  private constructor(config: OptionsServiceConfig) {
    this.#db = config.db;
    this.#bus = config.bus;
    this.#syncIntervalMs = config.syncIntervalMs;
    this.#logger = config.logger ?? silent;
    for (const definition of OPTION_DEFINITIONS) this.#values.set(definition.key, definition.default);
  }

  /** Loads defaults, then the stored rows, and starts following other pods' changes. */
  static async start(config: OptionsServiceConfig): Promise<OptionsService> {
    const service = new OptionsService(config);
    // Subscribe before the first read, so that no change can fall between the two.
    service.#unsubscribe = await config.bus.subscribe(OPTIONS_CHANNEL, (message) => service.#onMessage(message));
    try {
      await service.sync();
    } catch (error) {
      await service.close();
      throw error;
    }
    service.#timer = setInterval(() => {
      service.sync().catch((error: unknown) => service.#logger.error({ err: error }, 'option sync failed'));
    }, service.#syncIntervalMs);
    service.#timer.unref();
    return service;
  }

  /**
   * The stored text of an option. Keys are plain strings so that callers may compute them; the
   * `OptionKey` types are there for callers that want the compiler to catch a typo. An unknown key
   * or a getter of the wrong type is a programming error and throws.
   */
  get(key: OptionKey | (string & {})): string {
    const value = this.#values.get(key);
    if (value === undefined) throw new Error(`unknown option ${key}`);
    return value;
  }

  getBoolean(key: BooleanOptionKey | (string & {})): boolean {
    const cached = this.#resolved.get(key);
    if (cached?.type === 'boolean') return cached.value as boolean;
    return this.#resolve(key, 'boolean', this.#typed(key, 'boolean') === 'true') as boolean;
  }

  getNumber(key: NumericOptionKey | (string & {})): number {
    const cached = this.#resolved.get(key);
    if (cached?.type === 'number') return cached.value as number;
    return this.#resolve(key, 'number', Number(this.#typed(key, 'integer', 'number'))) as number;
  }

  /**
   * The parsed value with any overlay applied, cached until the option or an overlay changes: treat
   * it as read-only.
   */
  getJson<T = unknown>(key: JsonOptionKey | (string & {})): T {
    const cached = this.#resolved.get(key);
    if (cached?.type === 'json') return cached.value as T;
    const parsed: unknown = JSON.parse(this.#typed(key, 'json'));
    const overlay = this.#overlays.get(key);
    return this.#resolve(key, 'json', overlay ? overlay(parsed) : parsed) as T;
  }

  #resolve(key: string, type: ResolvedType, value: unknown): unknown {
    this.#resolved.set(key, { type, value });
    return value;
  }

  /**
   * Lays values kept elsewhere over a JSON option as readers see it (getJson); the stored option,
   * what the API lists and edits, is unchanged. `undefined` removes the overlay.
   */
  setOverlay(key: JsonOptionKey | (string & {}), overlay: ((value: unknown) => unknown) | undefined): void {
    this.#typed(key, 'json');
    if (overlay) this.#overlays.set(key, overlay);
    else this.#overlays.delete(key);
    this.#resolved.delete(key);
  }

  /** Every option, secrets included: for server-side use only. */
  all(): Record<string, string> {
    return Object.fromEntries(this.#values);
  }

  /** The options GET /api/option/ may show: everything but credentials, in table order. */
  publicList(): Array<{ key: string; value: string }> {
    return OPTION_DEFINITIONS.filter((d) => !d.secret).map((d) => ({
      key: d.key,
      value: this.get(d.key),
    }));
  }

  async set(key: string, value: string, options: SetOptionOptions = {}): Promise<void> {
    await this.setMany([{ key, value }], options);
  }

  /**
   * Validates every entry first, then writes them all in one transaction, or none.
   * Takes `{key: value}` or a list of `{key, value}` (the shape of PUT /api/option/ bodies).
   */
  async setMany(entries: OptionEntries, options: SetOptionOptions = {}): Promise<void> {
    const list = Array.isArray(entries) ? entries : Object.entries(entries).map(([key, value]) => ({ key, value }));
    const values = new Map<string, string>();
    for (const { key, value } of list) values.set(key, validateOption(key, value));
    if (values.size === 0) return;
    const keys = [...values.keys()];
    const now = Math.floor(Date.now() / 1000);
    const stamp =
      options.managedBy && options.resource
        ? {
            managed_by: options.managedBy,
            managed_namespace: options.resource.namespace,
            managed_name: options.resource.name,
            managed_uid: options.resource.uid,
          }
        : undefined;

    await this.#db.transaction().execute(async (trx) => {
      await options.alongside?.(trx);
      // Locking the existing rows keeps the operator from taking one over between check and write.
      const existing = await trx
        .selectFrom('options')
        .select(['key', 'managed_by', 'managed_namespace', 'managed_name'])
        .where('key', 'in', keys)
        .forUpdate()
        .execute();
      for (const row of existing) {
        if (row.managed_by === null || row.managed_by === options.managedBy) continue;
        const resource = row.managed_name ? `${row.managed_namespace ?? ''}/${row.managed_name}` : row.managed_by;
        throw new AppError(E.OPTION_MANAGED, { key: row.key, resource: resource ?? '' });
      }
      await trx
        .insertInto('options')
        .values(keys.map((key) => ({ key, value: values.get(key)!, updated_at: now, ...stamp })))
        .onConflict((conflict) =>
          conflict.column('key').doUpdateSet((eb) => ({
            value: eb.ref('excluded.value'),
            updated_at: eb.ref('excluded.updated_at'),
            ...(stamp && {
              managed_by: eb.ref('excluded.managed_by'),
              managed_namespace: eb.ref('excluded.managed_namespace'),
              managed_name: eb.ref('excluded.managed_name'),
              managed_uid: eb.ref('excluded.managed_uid'),
            }),
          })),
        )
        .execute();
    });

    // The ticket is taken after the commit: any read that started earlier is older and loses.
    const ticket = ++this.#ticket;
    for (const [key, value] of values) this.#apply(key, value, ticket, 'local');
    await this.#announce(keys);
  }

  /** Calls `listener` after every change of a value, whichever pod made it; returns an unsubscribe. */
  onChange(listener: OptionChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Re-reads every option from the database (also run every `syncIntervalMs`). */
  sync(): Promise<void> {
    // Overlapping runs would only do the same work twice.
    this.#syncing ??= this.#readAll().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    this.#listeners.clear();
    await unsubscribe?.();
  }

  #typed(key: string, ...types: OptionType[]): string {
    const definition = findOptionDefinition(key);
    if (definition && !types.includes(definition.type)) {
      throw new Error(`option ${key} is of type ${definition.type}, not ${types.join(' or ')}`);
    }
    return this.get(key);
  }

  async #readAll(): Promise<void> {
    const ticket = ++this.#ticket;
    const rows = await this.#db.selectFrom('options').select(['key', 'value']).execute();
    const stored = new Map(rows.map((row) => [row.key, row.value]));
    for (const key of stored.keys()) {
      if (!findOptionDefinition(key))
        this.#reportOnce(`unknown:${key}`, { key }, 'ignoring stored option: unknown key');
    }
    for (const definition of OPTION_DEFINITIONS) {
      this.#applyStored(definition.key, stored.get(definition.key), ticket);
    }
  }

  async #readKeys(keys: string[]): Promise<void> {
    const ticket = ++this.#ticket;
    const rows = await this.#db.selectFrom('options').select(['key', 'value']).where('key', 'in', keys).execute();
    const stored = new Map(rows.map((row) => [row.key, row.value]));
    for (const key of keys) this.#applyStored(key, stored.get(key), ticket);
  }

  /** A stored value (or its absence, meaning the default) as read at `ticket`. */
  #applyStored(key: string, raw: string | undefined, ticket: number): void {
    const definition = findOptionDefinition(key);
    if (!definition) return;
    if (raw === undefined) {
      this.#apply(key, definition.default, ticket, 'remote');
      return;
    }
    let value: string;
    try {
      value = validateOption(key, raw);
    } catch (error) {
      // A row written by hand or by an older version: keep serving the current value.
      const reason = error instanceof Error ? error.message : String(error);
      this.#reportOnce(`invalid:${key}:${raw}`, { key, reason }, 'ignoring stored option: invalid value');
      return;
    }
    this.#apply(key, value, ticket, 'remote');
  }

  #apply(key: string, value: string, ticket: number, source: OptionChange['source']): void {
    if (this.#closed || ticket <= (this.#tickets.get(key) ?? 0)) return;
    this.#tickets.set(key, ticket);
    const previous = this.#values.get(key);
    if (previous === undefined || previous === value) return;
    this.#values.set(key, value);
    this.#resolved.delete(key);
    const change: OptionChange = { key: key as OptionKey, value, previous, source };
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#logger.error({ err: error, key }, 'option change listener failed');
      }
    }
  }

  async #announce(keys: string[]): Promise<void> {
    const message: BusMessage = { origin: this.#instanceId, keys };
    try {
      await this.#bus.publish(OPTIONS_CHANNEL, JSON.stringify(message));
    } catch (error) {
      // The write is committed; other pods will pick it up on their next full sync.
      this.#logger.error({ err: error, keys }, 'could not announce option change');
    }
  }

  #onMessage(text: string): void {
    if (this.#closed) return;
    const message = parseMessage(text);
    if (!message) {
      this.#logger.warn({ message: text.slice(0, 200) }, 'ignoring malformed options bus message');
      return;
    }
    if (message.origin === this.#instanceId) return;
    const keys = message.keys.filter((key) => findOptionDefinition(key));
    if (keys.length === 0) return;
    this.#readKeys(keys).catch((error: unknown) =>
      this.#logger.error({ err: error, keys }, 'could not re-read changed options'),
    );
  }

  #reportOnce(id: string, details: object, msg: string): void {
    if (this.#reported.has(id)) return;
    this.#reported.add(id);
    this.#logger.warn(details, msg);
  }
}

function parseMessage(text: string): BusMessage | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const { origin, keys } = value as Record<string, unknown>;
    if (typeof origin !== 'string' || !Array.isArray(keys)) return undefined;
    if (!keys.every((key) => typeof key === 'string')) return undefined;
    return { origin, keys };
  } catch {
    return undefined;
  }
}

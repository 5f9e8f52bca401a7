import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import { AppError } from '../../errors.ts';
import type { ChannelsTable, Database } from '../../store/database.ts';
import {
  allChannels,
  CHANNEL_SORT_FIELDS,
  type ChannelFilters,
  type ChannelSort,
  channelHealthRows,
  channelObservations,
  channelsWithStatus,
  countChannelsByType,
  deleteChannels,
  deleteDisabledUnmanagedChannels,
  enabledModels,
  findChannel,
  insertChannel,
  listChannels,
  listChannelsByTag,
  lockChannels,
  modelListsOfTag,
  updateChannels,
} from '../../store/repositories/channels.ts';
import type { Keyring } from '../keyring.ts';
import { assertUnmanaged } from '../managed.ts';
import { findOptionDefinition } from '../options/definitions.ts';
import { rebuildAbilities, syncAbilities } from './abilities.ts';
import { balanceKey, balanceSupported, fetchUpstreamBalance } from './balance.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import {
  afterFailure,
  afterKeyRecovery,
  afterRecovery,
  autoDisabledKeys,
  type HealthChange,
  parseObject,
} from './health.ts';
import {
  applyChannelInput,
  CHANNEL_DEFAULTS,
  CHANNEL_STATUS,
  type ChannelConfig,
  type ChannelInput,
  type ChannelWarning,
  checkModelMapping,
  checkPriority,
  checkWeight,
  cleanBaseUrl,
  cleanList,
  configOf,
  isEmptyJsonObject,
  type JsonObjectInput,
  jsonObjectText,
} from './input.ts';
import { checkChannelKeys } from './key-check.ts';
import { channelInfoFor, type MultiKeyMode, readChannelInfo, splitKeys } from './keys.ts';
import {
  deleteOllamaModel,
  type OllamaServer,
  ollamaVersion,
  pullOllamaModel,
  pullOllamaModelProgress,
} from './ollama-admin.ts';
import { type ChannelType, channelType, knownModels, typeLabel } from './registry.ts';
import { FETCH_MODELS_TIMEOUT_MS, fetchUpstreamModels } from './upstream-models.ts';
import { type ChannelRow, type ChannelView, channelView } from './view.ts';

/** Bus channel on which every change to channels is announced, so routing caches on every pod refresh. */
export const CHANNELS_CHANNEL = 'channels';

/** Upstream detection: one group that reached a channel, and the kinds of client in it (Unix seconds). */
export interface UpstreamGroupObservation {
  group: string;
  first_seen: number;
  last_seen: number;
  client_types: Array<{ client_type: string; count: number; first_seen: number; last_seen: number }>;
}

/** How a create treats a key text holding several keys (new-api's `mode`). */
export type CreateMode = 'single' | 'batch' | 'multi_to_single';

export interface ChannelCreateInput extends ChannelInput {
  /** single (default) and multi_to_single: one channel holding every key; batch: one channel per key. */
  mode?: CreateMode | undefined;
  multi_key_mode?: MultiKeyMode | undefined;
}

export interface ChannelUpdateInput extends ChannelInput {
  id: number;
  /** replace (default): a non-empty key replaces the keys; append: adds to them. An empty key keeps them. */
  key_mode?: 'replace' | 'append' | undefined;
  multi_key_mode?: MultiKeyMode | undefined;
}

/** Tag edit (spec doc 2 §5): every field overwrites all channels of the tag; empty means no change. */
export interface TagEdit {
  tag: string;
  /** An empty string dissolves the tag; absent or equal to `tag` keeps it. */
  new_tag?: string | undefined;
  /** Empty JSON fields and lists keep what the channels have. */
  model_mapping?: JsonObjectInput | undefined;
  models?: string | string[] | undefined;
  groups?: string | string[] | undefined;
  priority?: number | undefined;
  weight?: number | undefined;
  param_override?: JsonObjectInput | undefined;
  header_override?: JsonObjectInput | undefined;
}

export interface ChannelPageQuery {
  keyword?: string | undefined;
  group?: string | undefined;
  model?: string | undefined;
  status?: ChannelFilters['status'];
  type?: number | undefined;
  idSort?: boolean | undefined;
  tagMode?: boolean | undefined;
  offset: number;
  limit: number;
}

export interface ChannelListQuery {
  filters?: ChannelFilters | undefined;
  sort?: { field: string; order: 'asc' | 'desc' | 'ASC' | 'DESC' } | undefined;
  offset: number;
  limit: number;
}

export interface ChannelServiceDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  bus?: Bus | undefined;
  fetchTimeoutMs?: number | undefined;
  /** Yuan per US dollar (option USDExchangeRate), for balances upstreams give in yuan. */
  usdExchangeRate?: (() => number) | undefined;
}

/** A channel as its protocol needs it to ask the upstream for models. */
export interface ProtocolModelQuery {
  protocol: string;
  baseUrl: string;
  other: string;
  key: string;
  timeoutMs: number;
}

/**
 * Lists an upstream's models through the channel's protocol (types with listing `protocol`, whose
 * list needs the protocol's own auth: SigV4, OAuth). Failures are AppErrors, as fetchUpstreamModels gives.
 */
export type ProtocolModelLister = (query: ProtocolModelQuery) => Promise<string[]>;

type Db = Kysely<Database> | Transaction<Database>;

const now = () => Math.floor(Date.now() / 1000);

/** The default of option USDExchangeRate, for a service built without options. */
const DEFAULT_USD_EXCHANGE_RATE = Number(findOptionDefinition('USDExchangeRate')?.default ?? 7.3);

/** How many upstreams a refresh of every balance asks at once. */
const BALANCE_REFRESH_CONCURRENCY = 4;

/** What a refresh of every enabled channel's balance did. */
export interface BalanceRefreshSummary {
  /** Enabled channels. */
  total: number;
  updated: number;
  /** Enabled channels whose type has no balance API. */
  skipped: number;
  failed: Array<{ id: number; name: string; error: AppError }>;
}

/** Fields whose change must be mirrored into the abilities table. */
const ROUTING_FIELDS = ['models', 'group', 'status', 'priority', 'weight', 'tag'] as const;

/** Channel management for administrators (spec doc 2 §5, §7); every rule lives here, not in routes. */
export class ChannelService {
  readonly #db: Kysely<Database>;
  readonly #keyring: Keyring;
  readonly #bus: Bus | undefined;
  readonly #fetchTimeoutMs: number;
  readonly #usdExchangeRate: () => number;
  #protocolModelLister: ProtocolModelLister | undefined;
  /** This pod's caches of channels (the routing index), reloaded by every change this pod makes. */
  readonly #localFollowers = new Set<(ids: readonly number[]) => Promise<void>>();

  constructor(deps: ChannelServiceDeps) {
    this.#db = deps.db;
    this.#keyring = deps.keyring;
    this.#bus = deps.bus;
    this.#fetchTimeoutMs = deps.fetchTimeoutMs ?? FETCH_MODELS_TIMEOUT_MS;
    this.#usdExchangeRate = deps.usdExchangeRate ?? (() => DEFAULT_USD_EXCHANGE_RATE);
  }

  // --- reading ---

  /** The channels page (spec doc 2 §2): priority order, or id order; tag mode pages over tags. */
  async page(query: ChannelPageQuery): Promise<{
    items: ChannelView[];
    total: number;
    type_counts: Record<number, number>;
  }> {
    const filters: ChannelFilters = {
      keyword: query.keyword,
      group: query.group,
      model: query.model,
      status: query.status,
    };
    const typed = { ...filters, type: query.type };
    const sort: ChannelSort = query.idSort ? { field: 'id', order: 'desc' } : { field: 'priority', order: 'desc' };
    const [result, typeCounts] = await Promise.all([
      query.tagMode
        ? listChannelsByTag(this.#db, typed, query.idSort ?? false, query.offset, query.limit)
        : listChannels(this.#db, typed, sort, query.offset, query.limit),
      countChannelsByType(this.#db, filters),
    ]);
    return { items: result.items.map(channelView), total: result.total, type_counts: typeCounts };
  }

  /** Generic listing for the REST dialect; an unknown sort field falls back to id. */
  async list(query: ChannelListQuery): Promise<{ items: ChannelView[]; total: number }> {
    const field = (CHANNEL_SORT_FIELDS as readonly string[]).includes(query.sort?.field ?? '')
      ? (query.sort?.field as ChannelSort['field'])
      : 'id';
    const order = query.sort?.order.toLowerCase() === 'desc' ? 'desc' : 'asc';
    const result = await listChannels(this.#db, query.filters ?? {}, { field, order }, query.offset, query.limit);
    return { items: result.items.map(channelView), total: result.total };
  }

  async get(id: number): Promise<ChannelView> {
    return channelView(await this.#find(this.#db, id));
  }

  /** The channel's plain key text (one key per line); for the relay and channel tests, never for answers. */
  async secret(id: number): Promise<string> {
    return this.#keyring.decrypt((await this.#find(this.#db, id)).key_encrypted);
  }

  enabledModels(): Promise<string[]> {
    return enabledModels(this.#db);
  }

  knownModels() {
    return knownModels();
  }

  /** The longest model list among the tag's channels, to prefill the tag editor (new-api's tag/models). */
  async tagModels(tag: string): Promise<string> {
    let longest = '';
    for (const models of await modelListsOfTag(this.#db, tag)) {
      if (cleanList(models).length > cleanList(longest).length) longest = models;
    }
    return longest;
  }

  // --- creating and editing ---

  async create(input: ChannelCreateInput): Promise<{ channels: ChannelView[]; warnings: ChannelWarning[] }> {
    if (!input.name?.trim() || !input.key?.trim()) throw new AppError(CHANNEL_ERRORS.CHANNEL_NAME_AND_KEY_REQUIRED);
    if (cleanList(input.models).length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_MODELS_REQUIRED);
    const keys = splitKeys(input.key);
    // A key text that holds no key at all (e.g. "[]") is no key.
    if (keys.length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_NAME_AND_KEY_REQUIRED);
    const { config, warnings } = applyChannelInput(input, CHANNEL_DEFAULTS);
    checkChannelKeys(config.type, keys);
    const keySets = input.mode === 'batch' ? keys.map((key) => [key]) : [keys];
    const created = await this.#db.transaction().execute(async (trx) => {
      const rows: ChannelRow[] = [];
      for (const set of keySets) {
        rows.push(
          await insertChannel(trx, {
            ...config,
            key_encrypted: this.#keyring.encrypt(set.join('\n')),
            channel_info: JSON.stringify(channelInfoFor(set.length, input.multi_key_mode)),
            created_time: now(),
          }),
        );
      }
      await syncAbilities(trx, rows);
      return rows;
    });
    await this.#announce(created.map((c) => c.id));
    return { channels: created.map(channelView), warnings };
  }

  /** Full or partial update: absent fields keep their value, so {id, status} and the like just work. */
  async update(input: ChannelUpdateInput): Promise<{ channel: ChannelView; warnings: ChannelWarning[] }> {
    const result = await this.#db.transaction().execute(async (trx) => {
      const row = await this.#lock(trx, input.id);
      const { config, changed, warnings } = applyChannelInput(input, configOf(row));
      const changes: Updateable<ChannelsTable> = Object.fromEntries(changed.map((field) => [field, config[field]]));
      const info = readChannelInfo(row.channel_info);
      const newKeys = this.#nextKeys(row, input);
      const managed: string[] = [...changed];
      if (newKeys) {
        changes.key_encrypted = this.#keyring.encrypt(newKeys.join('\n'));
        changes.channel_info = JSON.stringify(
          channelInfoFor(newKeys.length, input.multi_key_mode ?? info.multi_key_mode),
        );
        managed.push('key');
      } else if (input.multi_key_mode && input.multi_key_mode !== info.multi_key_mode) {
        changes.channel_info = JSON.stringify({ ...info, multi_key_mode: input.multi_key_mode });
        managed.push('multi_key_mode');
      }
      assertEditable(row, managed, config.status);
      if (Object.keys(changes).length === 0) return { row, warnings, updated: false };
      const [updated] = await updateChannels(trx, [row.id], changes);
      const routingChanged = changed.some((field) => (ROUTING_FIELDS as readonly string[]).includes(field));
      if (updated && routingChanged) await syncAbilities(trx, [updated]);
      return { row: updated ?? row, warnings, updated: true };
    });
    // Keys, mappings and overrides live in routing caches too, so any change is announced.
    if (result.updated) await this.#announce([result.row.id]);
    return { channel: channelView(result.row), warnings: result.warnings };
  }

  /**
   * The gateway's own verdict that a channel (or, with `keyIndex` on a multi-key channel, one key) is
   * failing: runtime state, so allowed on managed channels too. Answers the channel when it changed.
   */
  autoDisable(id: number, reason: string, keyIndex?: number): Promise<ChannelView | undefined> {
    return this.#changeHealth(id, (row) => afterFailure(row, reason, now(), keyIndex));
  }

  /**
   * Re-enables a channel the gateway disabled, after it tested well; with `keyIndex` on a multi-key
   * channel, only that key of those the gateway disabled (and the channel with it).
   */
  autoEnable(id: number, keyIndex?: number): Promise<ChannelView | undefined> {
    return this.#changeHealth(id, (row) =>
      keyIndex === undefined ? afterRecovery(row) : afterKeyRecovery(row, keyIndex),
    );
  }

  /** Channels a test-all run covers: every one not disabled by hand, in id order. */
  async idsToTest(): Promise<number[]> {
    const rows = await channelsWithStatus(this.#db, [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled]);
    return rows.map((row) => row.id);
  }

  /**
   * What the recovery re-tests cover, with when it was disabled (unix seconds): channels the gateway
   * disabled (`disabled`), and the keys it disabled on multi-key channels, enabled or not.
   */
  async autoDisabled(): Promise<
    Array<{ id: number; since: number; disabled: boolean; keys: Array<{ index: number; since: number }> }>
  > {
    const rows = await channelHealthRows(this.#db, [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled]);
    return rows
      .map((row) => {
        const since = parseObject(row.other_info).status_time;
        return {
          id: row.id,
          since: typeof since === 'number' ? since : 0,
          disabled: row.status === CHANNEL_STATUS.autoDisabled,
          keys: autoDisabledKeys(row.channel_info),
        };
      })
      .filter((channel) => channel.disabled || channel.keys.length > 0);
  }

  /** Records a channel test's response time (milliseconds) and when it ran. */
  async recordTest(id: number, responseTimeMs: number): Promise<void> {
    await updateChannels(this.#db, [id], { response_time: Math.round(responseTimeMs), test_time: now() });
  }

  async #changeHealth(id: number, decide: (row: ChannelRow) => HealthChange | undefined) {
    const row = await this.#db.transaction().execute(async (trx) => {
      const change = decide(await this.#lock(trx, id));
      if (!change) return undefined;
      const [updated] = await updateChannels(trx, [id], change);
      if (updated) await syncAbilities(trx, [updated]);
      return updated;
    });
    if (!row) return undefined;
    await this.#announce([id]);
    return channelView(row);
  }

  /** A new channel with the same configuration and key (new-api's copy: suffix "_复制", balance reset). */
  async copy(id: number, options: { suffix?: string | undefined; resetBalance?: boolean | undefined } = {}) {
    const suffix = options.suffix ?? '_复制';
    const resetBalance = options.resetBalance ?? true;
    const copied = await this.#db.transaction().execute(async (trx) => {
      const source = await this.#find(trx, id);
      const row = await insertChannel(trx, {
        ...configOf(source),
        name: source.name + suffix,
        // A fresh encryption of the same key: ciphertexts are never shared between rows.
        key_encrypted: this.#keyring.encrypt(this.#keyring.decrypt(source.key_encrypted)),
        channel_info: source.channel_info,
        created_time: now(),
        balance: resetBalance ? 0 : source.balance,
        balance_updated_time: resetBalance ? 0 : source.balance_updated_time,
        used_quota: resetBalance ? 0 : source.used_quota,
        // The copy belongs to nobody: it is a console record even when the source came from a resource.
      });
      await syncAbilities(trx, [row]);
      return row;
    });
    await this.#announce([copied.id]);
    return channelView(copied);
  }

  // --- deleting ---

  async delete(id: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const row = await this.#lock(trx, id);
      assertUnmanaged(row, 'Channel', ['delete']);
      await deleteChannels(trx, [id]);
    });
    await this.#announce([id]);
  }

  /** Deletes several channels; all or none: one managed channel among them refuses the whole batch. */
  async deleteMany(ids: readonly number[]): Promise<number> {
    if (ids.length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_DELETE_SELECTION_EMPTY);
    const deleted = await this.#db.transaction().execute(async (trx) => {
      const rows = await lockChannels(trx, { ids });
      for (const row of rows) assertUnmanaged(row, 'Channel', ['delete']);
      return deleteChannels(
        trx,
        rows.map((r) => r.id),
      );
    });
    await this.#announce([...ids]);
    return deleted;
  }

  /** Deletes every manually or automatically disabled channel (status 2 and 3) that no resource owns. */
  async deleteDisabled(): Promise<number> {
    const deleted = await this.#db.transaction().execute((trx) => deleteDisabledUnmanagedChannels(trx));
    if (deleted > 0) await this.#announce([]);
    return deleted;
  }

  /** Rebuilds the abilities table from every channel; answers how many channels it covered. */
  async fixAbilities(): Promise<number> {
    const count = await this.#db.transaction().execute((trx) => rebuildAbilities(trx));
    await this.#announce([]);
    return count;
  }

  // --- tags ---

  /** Sets (or with null, clears) the tag of the given channels; answers how many exist. */
  async setTag(ids: readonly number[], tag: string | null): Promise<number> {
    if (ids.length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_SELECTION_EMPTY);
    const value = tag === null ? null : tag.trim();
    if (value === '') throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_REQUIRED);
    return this.#editChannels({ ids }, { tag: value });
  }

  async editTag(edit: TagEdit): Promise<number> {
    const tag = edit.tag.trim();
    if (tag === '') throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_REQUIRED);
    const present = (value: JsonObjectInput | undefined): value is JsonObjectInput => !isEmptyJsonObject(value);
    const changes: Partial<ChannelConfig> = {};
    if (edit.new_tag !== undefined && edit.new_tag.trim() !== tag) {
      changes.tag = edit.new_tag.trim() === '' ? null : edit.new_tag.trim();
    }
    if (present(edit.model_mapping)) changes.model_mapping = checkModelMapping(edit.model_mapping);
    const models = cleanList(edit.models);
    if (models.length > 0) changes.models = models.join(',');
    const groups = cleanList(edit.groups);
    if (groups.length > 0) changes.group = groups.join(',');
    if (edit.priority !== undefined) changes.priority = checkPriority(edit.priority);
    if (edit.weight !== undefined) changes.weight = checkWeight(edit.weight);
    for (const field of ['param_override', 'header_override'] as const) {
      const value = edit[field];
      if (present(value)) changes[field] = jsonObjectText(value, CHANNEL_ERRORS.CHANNEL_JSON_FIELD_INVALID, { field });
    }
    if (Object.keys(changes).length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_NOTHING_CHANGED);
    return this.#editChannels({ tag }, changes, tag);
  }

  /** Tag-level enable-all / disable-all (spec doc 2 §4). */
  setTagStatus(tag: string, status: typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.disabled): Promise<number> {
    const trimmed = tag.trim();
    if (trimmed === '') throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_REQUIRED);
    return this.#editChannels({ tag: trimmed }, { status }, trimmed);
  }

  // --- upstream model lists ---

  /**
   * The relay's protocols, for types whose model list needs the protocol's own auth. Given once the
   * relay has started (it owns the upstream connections); until then such types are refused.
   */
  /**
   * Registers a cache of this pod that a change must reach before it returns; `reload` gets the changed ids
   * (empty: all) and must not reject. Returns what stops it.
   */
  followLocally(reload: (ids: readonly number[]) => Promise<void>): () => void {
    this.#localFollowers.add(reload);
    return () => this.#localFollowers.delete(reload);
  }

  useProtocolModelLister(lister: ProtocolModelLister): void {
    this.#protocolModelLister = lister;
  }

  async fetchModelsOf(id: number): Promise<string[]> {
    const row = await this.#find(this.#db, id);
    const key = splitKeys(this.#keyring.decrypt(row.key_encrypted))[0] ?? '';
    return this.#fetchModels(knownType(row.type), row.base_url, row.other, key);
  }

  /** For a channel not saved yet (root only): the form's base URL, type, key and `other`. */
  async fetchModelsFor(input: {
    base_url?: string | undefined;
    type?: number | undefined;
    key?: string | undefined;
    other?: string | undefined;
  }) {
    const key = splitKeys(input.key ?? '')[0];
    if (!key) throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_KEY_REQUIRED);
    const type = knownType(input.type ?? CHANNEL_DEFAULTS.type);
    return this.#fetchModels(type, cleanBaseUrl(input.base_url), input.other?.trim() ?? '', key);
  }

  // --- Ollama model management (new-api's /api/channel/ollama/*) ---

  pullOllamaModel = async (id: number, model: string) => pullOllamaModel(await this.#ollama(id), model);
  pullOllamaModelProgress = async (id: number, model: string, signal: AbortSignal) =>
    pullOllamaModelProgress(await this.#ollama(id), model, signal);
  deleteOllamaModel = async (id: number, model: string) =>
    deleteOllamaModel(await this.#ollama(id), model, this.#fetchTimeoutMs);
  ollamaVersion = async (id: number) => ollamaVersion(await this.#ollama(id), this.#fetchTimeoutMs);

  /** An Ollama channel's server and first key; other types are refused. */
  async #ollama(id: number): Promise<OllamaServer> {
    const row = await this.#find(this.#db, id);
    const type = knownType(row.type);
    if (type.protocol !== 'ollama') {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_OLLAMA_ONLY, { type: `${type.id} ${type.name}` });
    }
    const key = splitKeys(this.#keyring.decrypt(row.key_encrypted))[0] ?? '';
    return { baseUrl: row.base_url || type.baseUrl, key };
  }

  async #fetchModels(type: ChannelType, baseUrl: string | null, other: string, key: string): Promise<string[]> {
    const lister = this.#protocolModelLister;
    if (!type.offered || type.listing === 'none' || (type.listing === 'protocol' && !lister)) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_UNSUPPORTED, { type: `${type.id} ${type.name}` });
    }
    if (type.other?.required && other === '') {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_OTHER_REQUIRED, {
        type: typeLabel(type.id),
        label_zh: type.other.label.zh,
        label_en: type.other.label.en,
      });
    }
    if (type.listing === 'protocol' && lister && type.protocol) {
      // Bedrock and Vertex build their own hosts from the key or region: an empty base URL is fine.
      const query = { protocol: type.protocol, baseUrl: baseUrl ?? type.baseUrl, other, key };
      return lister({ ...query, timeoutMs: this.#fetchTimeoutMs });
    }
    const base = baseUrl ?? type.baseUrl;
    if (!base) throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_BASE_URL_REQUIRED);
    return fetchUpstreamModels(type, { baseUrl: base, other }, key, this.#fetchTimeoutMs);
  }

  // --- upstream balances ---

  /** Asks the channel's upstream for its account balance (US dollars) and stores it with the time. */
  async refreshBalance(id: number): Promise<{ balance: number; balance_updated_time: number }> {
    return this.#refreshBalance(await this.#find(this.#db, id));
  }

  /**
   * Refreshes every enabled channel, a few at a time. A channel whose type has no balance API is
   * skipped; an upstream failure is recorded and the rest go on. Stops early when `signal` aborts.
   */
  async refreshAllBalances(signal?: AbortSignal): Promise<BalanceRefreshSummary> {
    const rows = (await allChannels(this.#db)).filter((row) => row.status === CHANNEL_STATUS.enabled);
    const summary: BalanceRefreshSummary = { total: rows.length, updated: 0, skipped: 0, failed: [] };
    const queue = [...rows];
    const worker = async () => {
      for (let row = queue.shift(); row && !signal?.aborted; row = queue.shift()) {
        const type = channelType(row.type);
        if (!type || !balanceSupported(type)) {
          summary.skipped++;
          continue;
        }
        try {
          await this.#refreshBalance(row);
          summary.updated++;
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          summary.failed.push({ id: row.id, name: row.name, error });
        }
      }
    };
    await Promise.all(Array.from({ length: BALANCE_REFRESH_CONCURRENCY }, worker));
    summary.failed.sort((a, b) => a.id - b.id);
    return summary;
  }

  async #refreshBalance(row: ChannelRow): Promise<{ balance: number; balance_updated_time: number }> {
    const type = knownType(row.type);
    if (!balanceSupported(type)) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_BALANCE_UNSUPPORTED, { type: `${type.id} ${type.name}` });
    }
    const base = row.base_url || type.baseUrl;
    if (!base) throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_BASE_URL_REQUIRED);
    const key = balanceKey(this.#keyring.decrypt(row.key_encrypted), row.channel_info);
    const balance = await fetchUpstreamBalance(type, base, key, {
      timeoutMs: this.#fetchTimeoutMs,
      usdExchangeRate: this.#usdExchangeRate(),
    });
    const time = now();
    const [updated] = await updateChannels(this.#db, [row.id], { balance, balance_updated_time: time });
    if (!updated) throw new AppError(CHANNEL_ERRORS.CHANNEL_NOT_FOUND);
    await this.#announce([row.id]);
    return { balance, balance_updated_time: time };
  }

  // --- upstream detection ---

  /**
   * Which groups and kinds of client reached the channel's upstream through the relay (real traffic,
   * not channel tests): groups latest first, client types most used first.
   */
  async upstreamObservations(id: number): Promise<{ groups: UpstreamGroupObservation[] }> {
    await this.#find(this.#db, id);
    const byGroup = new Map<string, UpstreamGroupObservation>();
    for (const row of await channelObservations(this.#db, id)) {
      const type = {
        client_type: row.client_type,
        count: row.count,
        first_seen: row.first_seen,
        last_seen: row.last_seen,
      };
      const group = byGroup.get(row.group);
      if (!group) {
        byGroup.set(row.group, {
          group: row.group,
          first_seen: row.first_seen,
          last_seen: row.last_seen,
          client_types: [type],
        });
        continue;
      }
      group.first_seen = Math.min(group.first_seen, row.first_seen);
      group.last_seen = Math.max(group.last_seen, row.last_seen);
      group.client_types.push(type);
    }
    const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const groups = [...byGroup.values()].sort((a, b) => b.last_seen - a.last_seen || byName(a.group, b.group));
    for (const group of groups) {
      group.client_types.sort((a, b) => b.count - a.count || byName(a.client_type, b.client_type));
    }
    return { groups };
  }

  // --- helpers ---

  /** Applies the same column changes to a set of channels, managed checks and abilities included. */
  async #editChannels(filters: ChannelFilters, changes: Partial<ChannelConfig>, tag?: string): Promise<number> {
    const updated = await this.#db.transaction().execute(async (trx) => {
      const rows = await lockChannels(trx, filters);
      if (rows.length === 0 && tag !== undefined) throw new AppError(CHANNEL_ERRORS.CHANNEL_TAG_NOT_FOUND, { tag });
      const fields = Object.keys(changes) as Array<keyof ChannelConfig>;
      for (const row of rows) {
        assertEditable(
          row,
          fields.filter((field) => row[field] !== changes[field]),
          changes.status ?? row.status,
        );
      }
      const result = await updateChannels(
        trx,
        rows.map((r) => r.id),
        changes,
      );
      await syncAbilities(trx, result);
      return result;
    });
    await this.#announce(updated.map((r) => r.id));
    return updated.length;
  }

  /** The keys after an update, or undefined when they stay as they are. */
  #nextKeys(row: ChannelRow, input: ChannelUpdateInput): string[] | undefined {
    if (input.key === undefined || input.key.trim() === '') return undefined;
    const current = this.#plainKey(row);
    const given = splitKeys(input.key);
    const keys = input.key_mode === 'append' ? [...new Set([...splitKeys(current ?? ''), ...given])] : given;
    checkChannelKeys(input.type ?? row.type, given);
    return keys.join('\n') === current ? undefined : keys;
  }

  /** The stored key, or undefined if it cannot be read (encrypted under another SECRET_KEY). */
  #plainKey(row: ChannelRow): string | undefined {
    try {
      return this.#keyring.decrypt(row.key_encrypted);
    } catch {
      return undefined;
    }
  }

  async #find(db: Db, id: number): Promise<ChannelRow> {
    const row = await findChannel(db, id);
    if (!row) throw new AppError(CHANNEL_ERRORS.CHANNEL_NOT_FOUND);
    return row;
  }

  async #lock(trx: Transaction<Database>, id: number): Promise<ChannelRow> {
    const [row] = await lockChannels(trx, { ids: [id] });
    if (!row) throw new AppError(CHANNEL_ERRORS.CHANNEL_NOT_FOUND);
    return row;
  }

  /**
   * Tells every pod's routing cache; an empty list means "reload everything". Caches also resync on a timer.
   * This pod's own caches are reloaded before the change returns (read-your-writes): an administrator who
   * saves a channel and then calls the relay on the same pod is routed by what was saved, bus or no bus.
   */
  async #announce(ids: number[]): Promise<void> {
    this.#bus?.publish(CHANNELS_CHANNEL, JSON.stringify({ ids })).catch(() => {});
    await Promise.all([...this.#localFollowers].map((reload) => reload(ids)));
  }
}

/**
 * Refuses changes to configuration a custom resource owns. Status is configuration (the resource's
 * `enabled`), except re-enabling a channel the gateway auto-disabled: that undoes runtime state.
 */
function assertEditable(row: ChannelRow, changed: readonly string[], nextStatus: number): void {
  const owned = changed.filter(
    (field) =>
      field !== 'status' || !(row.status === CHANNEL_STATUS.autoDisabled && nextStatus === CHANNEL_STATUS.enabled),
  );
  assertUnmanaged(row, 'Channel', owned);
}

function knownType(id: number): ChannelType {
  const type = channelType(id);
  if (!type) throw new AppError(CHANNEL_ERRORS.CHANNEL_TYPE_UNKNOWN, { type: id });
  return type;
}

import type { Kysely, Selectable } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import { CHANNEL_STATUS, cleanList } from '../../domain/channels/input.ts';
import { readChannelInfo, splitKeys } from '../../domain/channels/keys.ts';
import { channelType } from '../../domain/channels/registry.ts';
import { CHANNELS_CHANNEL } from '../../domain/channels/service.ts';
import type { Keyring } from '../../domain/keyring.ts';
import type { ChannelsTable, Database } from '../../store/database.ts';
import type { ChannelSnapshot } from '../types.ts';
import { buildTiers, type KeyState, type Tier } from './picker.ts';

/** The subset of pino's logger the index uses. */
export interface RoutingLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RoutingIndexConfig {
  db: Kysely<Database>;
  keyring: Keyring;
  bus: Bus;
  /** Safety net: a full reload this often even without bus messages (new-api's SYNC_FREQUENCY, 60 s). */
  syncIntervalMs?: number | undefined;
  logger?: RoutingLogger | undefined;
}

type ChannelRow = Selectable<ChannelsTable>;
type Batch = 'all' | readonly number[];

interface Ability {
  group: string;
  model: string;
}

interface MutableKeyState extends KeyState {
  disabled: Set<number>;
}

const NO_TIERS: readonly Tier[] = Object.freeze([]);
const silent: RoutingLogger = { warn() {}, error() {} };

/**
 * The routing index (DESIGN.md §3 step 4, reference §4.1–§4.2): every channel with its keys
 * decrypted, and group × model → enabled channels in priority tiers, all in memory, so that
 * picking a channel never touches the database.
 *
 * Freshness: ChannelService announces every change on the `channels` bus channel as `{ids}` (an
 * empty list meaning "everything"); each pod re-reads those rows and swaps in a rebuilt index, so
 * every pod follows within a bus round-trip plus one query. Reloads run one at a time and changes
 * announced meanwhile are merged into the next one, so an older read never lands after a newer
 * one. A full reload every `syncIntervalMs` repairs anything a lost message missed.
 */
export class RoutingIndex {
  readonly #db: Kysely<Database>;
  readonly #keyring: Keyring;
  readonly #logger: RoutingLogger;
  /** Every channel, enabled or not (a pinned channel is looked up by id). */
  #channels = new Map<number, ChannelSnapshot>();
  /** Enabled abilities per channel id, as the abilities table holds them. */
  #abilities = new Map<number, Ability[]>();
  #index = new Map<string, Map<string, readonly Tier[]>>();
  /** Per channel: round-robin cursor (kept across reloads, as new-api's memory cache does) and disabled keys. */
  readonly #keyStates = new Map<number, MutableKeyState>();
  /** Decrypted keys by ciphertext, so a reload decrypts only keys that changed. */
  #decrypted = new Map<number, { cipher: string; keys: string[] }>();
  readonly #reported = new Set<string>();
  #pending: Set<number> | 'all' | undefined;
  /** Reload requests made, and how many of them a finished load has read (read-your-writes waits on it). */
  #requested = 0;
  #covered = 0;
  #draining: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #ready = false;
  #closed = false;

  private constructor(config: RoutingIndexConfig) {
    this.#db = config.db;
    this.#keyring = config.keyring;
    this.#logger = config.logger ?? silent;
  }

  /** Loads every channel and starts following changes; rejects if the first load fails. */
  static async start(config: RoutingIndexConfig): Promise<RoutingIndex> {
    const index = new RoutingIndex(config);
    // Subscribe before the first read, so that no change can fall between the two.
    index.#unsubscribe = await config.bus.subscribe(CHANNELS_CHANNEL, (message) => index.#onMessage(message));
    try {
      await index.#load('all');
    } catch (error) {
      await index.close();
      throw error;
    }
    // Changes announced during the first load are read after it, never alongside it.
    index.#ready = true;
    if (index.#pending !== undefined) void index.#schedule();
    index.#timer = setInterval(() => void index.reload(), config.syncIntervalMs ?? 60_000);
    index.#timer.unref();
    return index;
  }

  /**
   * Enabled channels serving `model` in `group`, in priority tiers, highest first. The exact model
   * name wins; otherwise its wildcard form (reference §4.2: Gemini 2.5 `-thinking-*` budgets,
   * `gpt-4-gizmo-*`, `gpt-4o-gizmo-*`). The arrays are shared: never modify them.
   */
  candidates(group: string, model: string): readonly Tier[] {
    const models = this.#index.get(group);
    if (models === undefined) return NO_TIERS;
    const exact = models.get(model);
    if (exact !== undefined) return exact;
    const wildcard = matchingModelName(model);
    return (wildcard !== model ? models.get(wildcard) : undefined) ?? NO_TIERS;
  }

  /** Any channel by id, enabled or not (pinned channels); the caller checks `status`. */
  channel(id: number): ChannelSnapshot | undefined {
    return this.#channels.get(id);
  }

  /** The multi-key state of a channel, for `pickKey`. */
  keyState(id: number): KeyState | undefined {
    return this.#keyStates.get(id);
  }

  /** Models some enabled channel serves in `group`, in name order. */
  models(group: string): string[] {
    return [...(this.#index.get(group)?.keys() ?? [])].sort();
  }

  /** Groups that have at least one enabled channel. */
  groups(): string[] {
    return [...this.#index.keys()].sort();
  }

  /**
   * Re-reads the given channels (all when none are given) and resolves once the index reflects
   * them. A failed read is logged; the next message or the periodic reload retries it.
   */
  async reload(ids?: readonly number[]): Promise<void> {
    if (this.#closed) return;
    this.#enqueue(ids);
    const wanted = ++this.#requested;
    // A drain about to finish may have taken its batch before these ids were queued: wait for one that read them.
    while (this.#covered < wanted && !this.#closed) await this.#schedule();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await unsubscribe?.();
    await this.#draining;
  }

  #enqueue(ids: readonly number[] | undefined): void {
    if (ids === undefined || ids.length === 0) this.#pending = 'all';
    else if (this.#pending !== 'all') {
      this.#pending ??= new Set();
      for (const id of ids) this.#pending.add(id);
    }
  }

  #schedule(): Promise<void> {
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
      // A request that arrived while the last batch was finishing.
      if (this.#pending !== undefined && !this.#closed) void this.#schedule();
    });
    return this.#draining;
  }

  async #drain(): Promise<void> {
    while (this.#pending !== undefined && !this.#closed) {
      const batch: Batch = this.#pending === 'all' ? 'all' : [...this.#pending];
      this.#pending = undefined;
      const covers = this.#requested;
      try {
        await this.#load(batch);
      } catch (error) {
        this.#logger.error({ err: error, ids: batch }, 'could not reload channels for routing');
      }
      // Read, or failed and logged: a waiting reload returns either way (the periodic reload repairs a failure).
      this.#covered = Math.max(this.#covered, covers);
    }
  }

  #onMessage(text: string): void {
    if (this.#closed) return;
    this.#enqueue(parseIds(text));
    if (this.#ready) void this.#schedule();
  }

  async #load(batch: Batch): Promise<void> {
    const channelQuery = this.#db.selectFrom('channels').selectAll();
    const abilityQuery = this.#db
      .selectFrom('abilities')
      .select(['group', 'model', 'channel_id'])
      .where('enabled', '=', true);
    const [rows, abilityRows] =
      batch === 'all'
        ? await Promise.all([channelQuery.execute(), abilityQuery.execute()])
        : await Promise.all([
            channelQuery.where('id', 'in', batch).execute(),
            abilityQuery.where('channel_id', 'in', batch).execute(),
          ]);
    if (this.#closed) return;

    // Everything below is synchronous: readers never see a half-applied reload.
    const keys = rows.map((row) => this.#keysOf(row));
    const full = batch === 'all';
    const channels = full ? new Map<number, ChannelSnapshot>() : this.#channels;
    const abilities = full ? new Map<number, Ability[]>() : this.#abilities;
    const decrypted = full ? new Map<number, { cipher: string; keys: string[] }>() : this.#decrypted;
    if (!full) {
      for (const id of batch) {
        channels.delete(id);
        abilities.delete(id);
        decrypted.delete(id);
      }
    }
    rows.forEach((row, i) => {
      const rowKeys = keys[i] ?? [];
      decrypted.set(row.id, { cipher: row.key_encrypted, keys: rowKeys });
      channels.set(
        row.id,
        snapshotOf(row, rowKeys, (field) => this.#reportOnce(row, field)),
      );
      this.#syncKeyState(row);
    });
    for (const row of abilityRows) {
      const list = abilities.get(row.channel_id);
      if (list) list.push({ group: row.group, model: row.model });
      else abilities.set(row.channel_id, [{ group: row.group, model: row.model }]);
    }
    for (const id of this.#keyStates.keys()) if (!channels.has(id)) this.#keyStates.delete(id);
    this.#channels = channels;
    this.#abilities = abilities;
    this.#decrypted = decrypted;
    this.#index = buildIndex(channels, abilities);
  }

  /** Keys are decrypted once per ciphertext; one that cannot be read leaves the channel keyless. */
  #keysOf(row: ChannelRow): string[] {
    const previous = this.#decrypted.get(row.id);
    if (previous?.cipher === row.key_encrypted) return previous.keys;
    try {
      return splitKeys(this.#keyring.decrypt(row.key_encrypted));
    } catch {
      this.#reportOnce(row, 'key');
      return [];
    }
  }

  #syncKeyState(row: ChannelRow): void {
    const info = readChannelInfo(row.channel_info);
    const disabled = new Set<number>();
    for (const [index, status] of Object.entries(info.multi_key_status_list ?? {})) {
      if (status !== CHANNEL_STATUS.enabled) disabled.add(Number(index));
    }
    const state = this.#keyStates.get(row.id);
    if (state) state.disabled = disabled;
    else this.#keyStates.set(row.id, { cursor: info.multi_key_polling_index || 0, disabled });
  }

  /** Once per channel, field and stored value, so the periodic reload does not repeat it. */
  #reportOnce(row: ChannelRow, field: string): void {
    const id = `${row.id}:${field}:${field === 'key' ? row.key_encrypted : String(row[field as keyof ChannelRow])}`;
    if (this.#reported.has(id)) return;
    this.#reported.add(id);
    const msg =
      field === 'key'
        ? 'channel key cannot be decrypted (another SECRET_KEY?); the channel is not routed to'
        : 'ignoring channel setting: not a JSON object';
    this.#logger.warn({ channel: row.id, field }, msg);
  }
}

function buildIndex(
  channels: ReadonlyMap<number, ChannelSnapshot>,
  abilities: ReadonlyMap<number, readonly Ability[]>,
): Map<string, Map<string, readonly Tier[]>> {
  const lists = new Map<string, Map<string, ChannelSnapshot[]>>();
  for (const [id, list] of abilities) {
    const channel = channels.get(id);
    // A channel whose key cannot be read would only fail; so would a stored row of a type Tollgate
    // does not speak (the channel list marks it unsupported): leave both out of routing.
    if (!channel || channel.status !== CHANNEL_STATUS.enabled || channel.keys.length === 0) continue;
    if (!channelType(channel.type)?.offered) continue;
    for (const { group, model } of list) {
      let models = lists.get(group);
      if (!models) {
        models = new Map();
        lists.set(group, models);
      }
      const members = models.get(model);
      if (members) members.push(channel);
      else models.set(model, [channel]);
    }
  }
  const index = new Map<string, Map<string, readonly Tier[]>>();
  for (const [group, models] of lists) {
    const tiers = new Map<string, readonly Tier[]>();
    for (const [model, members] of models) tiers.set(model, Object.freeze(buildTiers(members)));
    index.set(group, tiers);
  }
  return index;
}

const JSON_FIELDS = [
  'model_mapping',
  'status_code_mapping',
  'param_override',
  'header_override',
  'setting',
  'settings',
] as const;

function snapshotOf(row: ChannelRow, keys: string[], report: (field: string) => void): ChannelSnapshot {
  const json: Partial<Record<(typeof JSON_FIELDS)[number], Record<string, unknown>>> = {};
  for (const field of JSON_FIELDS) {
    const parsed = parseObject(row[field]);
    if (parsed === 'invalid') report(field);
    else if (parsed !== undefined) json[field] = parsed;
  }
  const snapshot: ChannelSnapshot = {
    id: row.id,
    type: row.type,
    name: row.name,
    status: row.status,
    baseUrl: row.base_url ?? '',
    keys,
    multiKeyMode: readChannelInfo(row.channel_info).multi_key_mode === 'polling' ? 'polling' : 'random',
    models: cleanList(row.models),
    groups: cleanList(row.group),
    priority: Number(row.priority),
    weight: Number(row.weight),
    tag: row.tag,
    autoBan: row.auto_ban === 1,
    other: row.other,
    openaiOrganization: row.openai_organization,
    testModel: row.test_model,
  };
  if (json.model_mapping) snapshot.modelMapping = json.model_mapping as Record<string, string>;
  if (json.status_code_mapping) snapshot.statusCodeMapping = json.status_code_mapping as Record<string, string>;
  if (json.param_override) snapshot.paramOverride = json.param_override;
  if (json.header_override) snapshot.headerOverride = json.header_override as Record<string, string>;
  if (json.setting) snapshot.setting = json.setting;
  if (json.settings) snapshot.settings = json.settings;
  return snapshot;
}

/** A JSON object setting: undefined when empty (or `{}`), 'invalid' when it is not an object. */
function parseObject(text: string | null): Record<string, unknown> | 'invalid' | undefined {
  if (text === null || text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
    return Object.keys(value).length === 0 ? undefined : (value as Record<string, unknown>);
  } catch {
    return 'invalid';
  }
}

/** The ids of a `{ids}` bus message; undefined (reload everything) when it names none or is malformed. */
function parseIds(text: string): number[] | undefined {
  try {
    const message = JSON.parse(text) as { ids?: unknown };
    const ids = message?.ids;
    if (Array.isArray(ids) && ids.every((id) => Number.isSafeInteger(id))) return ids as number[];
  } catch {}
  return undefined;
}

const GEMINI_THINKING_PREFIXES = ['gemini-2.5-flash-lite', 'gemini-2.5-flash', 'gemini-2.5-pro'] as const;

/**
 * The wildcard name a channel lists to serve a family of parameterised model names (new-api's
 * FormatMatchingModelName): `gemini-2.5-flash-thinking-1024` → `gemini-2.5-flash-thinking-*`,
 * `gpt-4-gizmo-g-abc` → `gpt-4-gizmo-*`. Other names come back unchanged.
 */
export function matchingModelName(name: string): string {
  for (const prefix of GEMINI_THINKING_PREFIXES) {
    if (name.startsWith(prefix)) {
      if (name.includes('-thinking-')) return `${prefix}-thinking-*`;
      break;
    }
  }
  if (name.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  if (name.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  return name;
}

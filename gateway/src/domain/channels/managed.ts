import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import { AppError } from '../../errors.ts';
import type { ChannelsTable, Database } from '../../store/database.ts';
import { deleteChannels, insertChannel, updateChannels } from '../../store/repositories/channels.ts';
import type { Keyring } from '../keyring.ts';
import { managedColumns, OPERATOR_MANAGER, type ResourceRef, type SpecRejection } from '../managed-resource.ts';
import { abilitiesOf, syncAbilities } from './abilities.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { parseObject } from './health.ts';
import {
  applyChannelInput,
  CHANNEL_DEFAULTS,
  CHANNEL_STATUS,
  type ChannelConfigField,
  type ChannelInput,
  configOf,
} from './input.ts';
import { checkChannelKeys } from './key-check.ts';
import { channelInfoFor, type MultiKeyMode, readChannelInfo, splitKeys } from './keys.ts';
import { CHANNELS_CHANNEL } from './service.ts';
import type { ChannelRow } from './view.ts';

/**
 * Channels declared as Channel custom resources: the operator's writes, through the same input
 * rules as the API (applyChannelInput), the same key encryption and the same routing index.
 * A resource owns its row by uid; configuration comes from the resource, runtime state (auto-disable,
 * tests, balance, used quota) stays the gateway's.
 */

export interface ManagedChannelSpec {
  /** Configuration in the API's terms; absent fields take the defaults (the resource is the whole truth). */
  input: Omit<ChannelInput, 'status' | 'key'>;
  /**
   * Key text: one key per line, or a JSON array. Undefined when the key cannot be read right now: an
   * existing channel keeps its stored key (the rest is still applied); a new one cannot be created.
   */
  key: string | undefined;
  multiKeyMode: MultiKeyMode;
  enabled: boolean;
}

/** What the gateway knows about a channel at run time, for the resource's status. */
export interface ManagedChannelState {
  id: number;
  /** 1 enabled, 2 disabled, 3 disabled by the gateway. */
  status: number;
  /** Why and when the gateway disabled it (other_info); undefined when it did not. */
  statusReason: string | undefined;
  /** Unix seconds. */
  statusTime: number | undefined;
  /** Unix seconds; 0 when never tested. */
  testTime: number;
  /** Milliseconds. */
  responseTime: number;
  usedQuota: number;
  /** US dollars. */
  balance: number;
  /** Unix seconds; 0 when never refreshed. */
  balanceUpdatedTime: number;
  modelCount: number;
}

export type ManagedChannelResult = { ok: true; changed: boolean; state: ManagedChannelState } | SpecRejection;

export interface ManagedChannelDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  bus?: Bus | undefined;
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Makes the channel owned by `owner` match `spec`: creates it, changes what differs, or nothing.
 * Idempotent; a spec the gateway's rules refuse changes nothing and answers why.
 */
export async function applyManagedChannel(
  deps: ManagedChannelDeps,
  owner: ResourceRef,
  spec: ManagedChannelSpec,
): Promise<ManagedChannelResult> {
  const keys = spec.key === undefined ? undefined : splitKeys(spec.key);
  if (keys?.length === 0) return rejection(new AppError(CHANNEL_ERRORS.CHANNEL_NAME_AND_KEY_REQUIRED));
  let config: ReturnType<typeof applyChannelInput>['config'];
  try {
    config = applyChannelInput(
      { ...spec.input, status: spec.enabled ? CHANNEL_STATUS.enabled : CHANNEL_STATUS.disabled },
      CHANNEL_DEFAULTS,
    ).config;
    if (config.models === '') throw new AppError(CHANNEL_ERRORS.CHANNEL_MODELS_REQUIRED);
    if (keys) checkChannelKeys(config.type, keys);
  } catch (error) {
    if (error instanceof AppError) return rejection(error);
    throw error;
  }
  const keyText = keys?.join('\n');

  const written = await deps.db.transaction().execute(async (trx) => {
    const existing = await lockOwned(trx, owner.uid);
    if (!existing) {
      if (keys === undefined || keyText === undefined) return undefined;
      const inserted = await insertChannel(trx, {
        ...config,
        key_encrypted: deps.keyring.encrypt(keyText),
        channel_info: JSON.stringify(channelInfoFor(keys.length, spec.multiKeyMode)),
        created_time: now(),
        ...managedColumns(owner),
      });
      await syncAbilities(trx, [inserted]);
      return { row: inserted, changed: true };
    }
    const changes: Updateable<ChannelsTable> = {};
    const current = configOf(existing);
    // Enabled in the resource does not undo the gateway's own verdict: an auto-disabled channel stays
    // so until its recovery test passes.
    const status =
      config.status === CHANNEL_STATUS.enabled && existing.status === CHANNEL_STATUS.autoDisabled
        ? CHANNEL_STATUS.autoDisabled
        : config.status;
    const desired = { ...config, status };
    for (const field of Object.keys(desired) as ChannelConfigField[]) {
      if (desired[field] !== current[field]) (changes as Record<string, unknown>)[field] = desired[field];
    }
    const info = readChannelInfo(existing.channel_info);
    if (keys !== undefined && keyText !== undefined && plainKey(deps.keyring, existing.key_encrypted) !== keyText) {
      changes.key_encrypted = deps.keyring.encrypt(keyText);
      changes.channel_info = JSON.stringify(channelInfoFor(keys.length, spec.multiKeyMode));
    } else if (info.multi_key_mode !== spec.multiKeyMode) {
      changes.channel_info = JSON.stringify({ ...info, multi_key_mode: spec.multiKeyMode });
    }
    const ownership = managedColumns(owner);
    if (
      existing.managed_namespace !== ownership.managed_namespace ||
      existing.managed_name !== ownership.managed_name
    ) {
      Object.assign(changes, ownership);
    }
    let row = existing;
    if (Object.keys(changes).length > 0) {
      const [updated] = await updateChannels(trx, [existing.id], changes);
      if (updated) row = updated;
    }
    // The routing index is checked every time, so a row or ability edited behind the gateway's back is repaired.
    const abilitiesRepaired = await repairAbilities(trx, row);
    return { row, changed: Object.keys(changes).length > 0 || abilitiesRepaired };
  });
  if (!written) return { ok: false, code: 'CHANNEL_KEY_UNAVAILABLE', message: 'no key to create the channel with' };
  const { row, changed } = written;
  if (changed) announce(deps.bus, [row.id]);
  return { ok: true, changed, state: channelState(row) };
}

/** The runtime state of the channel `uid` owns, or undefined when it has none. */
export async function managedChannelState(db: Kysely<Database>, uid: string): Promise<ManagedChannelState | undefined> {
  const row = await db
    .selectFrom('channels')
    .selectAll()
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .orderBy('id')
    .executeTakeFirst();
  return row && channelState(row);
}

/** Deletes the channels `uid` owns (abilities and observations go with them); answers how many. */
export async function deleteManagedChannel(deps: Omit<ManagedChannelDeps, 'keyring'>, uid: string): Promise<number> {
  const ids = await deps.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('channels')
      .select('id')
      .where('managed_by', '=', OPERATOR_MANAGER)
      .where('managed_uid', '=', uid)
      .forUpdate()
      .execute();
    const ids = rows.map((r) => r.id);
    await deleteChannels(trx, ids);
    return ids;
  });
  if (ids.length > 0) announce(deps.bus, ids);
  return ids.length;
}

export function channelState(row: ChannelRow): ManagedChannelState {
  const other = parseObject(row.other_info);
  const reason = other.status_reason;
  const time = other.status_time;
  return {
    id: row.id,
    status: row.status,
    statusReason: row.status === CHANNEL_STATUS.enabled || typeof reason !== 'string' ? undefined : reason,
    statusTime: row.status === CHANNEL_STATUS.enabled || typeof time !== 'number' ? undefined : time,
    testTime: row.test_time,
    responseTime: row.response_time,
    usedQuota: row.used_quota,
    balance: row.balance,
    balanceUpdatedTime: row.balance_updated_time,
    modelCount: row.models === '' ? 0 : row.models.split(',').length,
  };
}

/** The oldest channel `uid` owns, locked until the transaction ends. */
function lockOwned(trx: Transaction<Database>, uid: string): Promise<ChannelRow | undefined> {
  return trx
    .selectFrom('channels')
    .selectAll()
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/** Rewrites the channel's abilities when they differ from what its row implies; true when it did. */
async function repairAbilities(trx: Transaction<Database>, row: ChannelRow): Promise<boolean> {
  const stored = await trx
    .selectFrom('abilities')
    .select(['group', 'model', 'enabled', 'priority', 'weight', 'tag'])
    .where('channel_id', '=', row.id)
    .execute();
  const text = (a: {
    group: string;
    model: string;
    enabled: boolean;
    priority?: number;
    weight?: number;
    tag?: unknown;
  }) => JSON.stringify([a.group, a.model, a.enabled, Number(a.priority ?? 0), a.weight ?? 0, a.tag ?? null]);
  const have = stored.map(text).sort();
  const want = abilitiesOf(row).map(text).sort();
  if (have.length === want.length && have.every((entry, index) => entry === want[index])) return false;
  await syncAbilities(trx, [row]);
  return true;
}

function plainKey(keyring: Keyring, encrypted: string): string | undefined {
  try {
    return keyring.decrypt(encrypted);
  } catch {
    return undefined;
  }
}

function rejection(error: AppError): SpecRejection {
  return { ok: false, code: error.code, message: error.message };
}

function announce(bus: Bus | undefined, ids: number[]): void {
  bus?.publish(CHANNELS_CHANNEL, JSON.stringify({ ids })).catch(() => {});
}

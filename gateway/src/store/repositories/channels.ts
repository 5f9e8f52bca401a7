import {
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  type SqlBool,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import type { AbilitiesTable, ChannelsTable, Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;
type ChannelRow = Selectable<ChannelsTable>;

export interface ChannelFilters {
  /** Matches the id exactly, or name, base URL or tag in part; never the key. */
  keyword?: string | undefined;
  ids?: readonly number[] | undefined;
  type?: number | undefined;
  /** 'enabled' is status 1, 'disabled' anything else; a number is that status. */
  status?: 'enabled' | 'disabled' | number | undefined;
  /** One of the channel's groups. */
  group?: string | undefined;
  /** Part of the channel's model list. */
  model?: string | undefined;
  tag?: string | undefined;
  name?: string | undefined;
}

export const CHANNEL_SORT_FIELDS = [
  'id',
  'name',
  'type',
  'status',
  'priority',
  'weight',
  'created_time',
  'test_time',
  'response_time',
  'used_quota',
  'balance',
  'tag',
] as const;
export type ChannelSortField = (typeof CHANNEL_SORT_FIELDS)[number];
export interface ChannelSort {
  field: ChannelSortField;
  order: 'asc' | 'desc';
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function conditions(eb: ExpressionBuilder<Database, 'channels'>, filters: ChannelFilters): Expression<SqlBool>[] {
  const all: Expression<SqlBool>[] = [];
  const keyword = filters.keyword?.trim();
  if (keyword) {
    const pattern = likePattern(keyword);
    all.push(
      eb.or([
        ...(/^\d{1,9}$/.test(keyword) ? [eb('id', '=', Number(keyword))] : []),
        eb('name', 'ilike', pattern),
        eb('base_url', 'ilike', pattern),
        eb('tag', 'ilike', pattern),
      ]),
    );
  }
  if (filters.ids) all.push(filters.ids.length > 0 ? eb('id', 'in', filters.ids) : sql<boolean>`false`);
  if (filters.type !== undefined) all.push(eb('type', '=', filters.type));
  if (filters.status === 'enabled') all.push(eb('status', '=', 1));
  else if (filters.status === 'disabled') all.push(eb('status', '!=', 1));
  else if (filters.status !== undefined) all.push(eb('status', '=', filters.status));
  const group = filters.group?.trim();
  // Groups are stored as a clean comma list, so a group is in it exactly when ",g," is in ",list,".
  if (group) all.push(sql<boolean>`(',' || ${eb.ref('group')} || ',') like ${likePattern(`,${group},`)}`);
  const model = filters.model?.trim();
  if (model) all.push(eb('models', 'ilike', likePattern(model)));
  if (filters.tag !== undefined) all.push(eb('tag', '=', filters.tag));
  const name = filters.name?.trim();
  if (name) all.push(eb('name', 'ilike', likePattern(name)));
  return all;
}

const filtered = (db: Db, filters: ChannelFilters) =>
  db.selectFrom('channels').where((eb) => eb.and(conditions(eb, filters)));

export async function listChannels(
  db: Db,
  filters: ChannelFilters,
  sort: ChannelSort,
  offset: number,
  limit: number,
): Promise<{ items: ChannelRow[]; total: number }> {
  const [items, count] = await Promise.all([
    filtered(db, filters)
      .selectAll()
      .orderBy(sort.field, sort.order)
      .$if(sort.field !== 'id', (q) => q.orderBy('id', 'desc'))
      .offset(offset)
      .limit(limit)
      .execute(),
    filtered(db, filters).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: count.n };
}

/** A tag, or an untagged channel by itself: what one row of the tag-mode table shows. */
const unitOf = sql<string>`coalesce(nullif(tag, ''), '#' || id::text)`;

/**
 * Tag mode: pages over units (tags and untagged channels), then answers every matching channel of
 * the units on the page, units in order, each unit's channels together.
 */
export async function listChannelsByTag(
  db: Db,
  filters: ChannelFilters,
  idSort: boolean,
  offset: number,
  limit: number,
): Promise<{ items: ChannelRow[]; total: number }> {
  const units = await filtered(db, filters)
    .select([unitOf.as('unit'), sql<number>`max(priority)`.as('priority'), sql<number>`max(id)`.as('id')])
    .groupBy(unitOf)
    .$if(!idSort, (q) => q.orderBy(sql`max(priority)`, 'desc'))
    .orderBy(sql`max(id)`, 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await filtered(db, filters)
    .select(sql<number>`count(distinct ${unitOf})::int`.as('n'))
    .executeTakeFirstOrThrow();
  if (units.length === 0) return { items: [], total: count.n };
  const order = new Map(units.map((u, index) => [u.unit, index]));
  const rows = await filtered(db, filters)
    .selectAll()
    .select(unitOf.as('unit'))
    .where(unitOf, 'in', [...order.keys()])
    .$if(!idSort, (q) => q.orderBy('priority', 'desc'))
    .orderBy('id', 'desc')
    .execute();
  rows.sort((a, b) => (order.get(a.unit) ?? 0) - (order.get(b.unit) ?? 0));
  return { items: rows.map(({ unit: _unit, ...row }) => row), total: count.n };
}

/** Channel count per type over the filtered channels (new-api's `type_counts`). */
export async function countChannelsByType(db: Db, filters: ChannelFilters): Promise<Record<number, number>> {
  const rows = await filtered(db, filters)
    .select(['type', sql<number>`count(*)::int`.as('n')])
    .groupBy('type')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.type, r.n]));
}

export function findChannel(db: Db, id: number): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The channels, locked until the transaction ends, so concurrent edits apply one after the other. */
export function lockChannels(db: Transaction<Database>, filters: ChannelFilters): Promise<ChannelRow[]> {
  return filtered(db, filters).selectAll().orderBy('id').forUpdate().execute();
}

export function insertChannel(db: Db, values: Insertable<ChannelsTable>): Promise<ChannelRow> {
  return db.insertInto('channels').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Ids and other_info of the channels in the given statuses, in id order (health checks). */
export function channelsWithStatus(db: Db, statuses: readonly number[]) {
  return db.selectFrom('channels').select(['id', 'other_info']).where('status', 'in', statuses).orderBy('id').execute();
}

/** Channels of these statuses with what health decisions read: status, other_info and channel_info. */
export function channelHealthRows(db: Db, statuses: readonly number[]) {
  return db
    .selectFrom('channels')
    .select(['id', 'status', 'other_info', 'channel_info'])
    .where('status', 'in', statuses)
    .orderBy('id')
    .execute();
}

export function updateChannels(
  db: Db,
  ids: readonly number[],
  changes: Updateable<ChannelsTable>,
): Promise<ChannelRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.updateTable('channels').set(changes).where('id', 'in', ids).returningAll().execute();
}

export async function deleteChannels(db: Db, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const deleted = await db.deleteFrom('channels').where('id', 'in', ids).returning('id').execute();
  await deleteChannelObservations(
    db,
    deleted.map((r) => r.id),
  );
  return deleted.length;
}

/** Every channel with status 2 or 3 that no custom resource owns; answers how many were deleted. */
export async function deleteDisabledUnmanagedChannels(db: Db): Promise<number> {
  const deleted = await db
    .deleteFrom('channels')
    .where('status', 'in', [2, 3])
    .where('managed_by', 'is', null)
    .returning('id')
    .execute();
  await deleteChannelObservations(
    db,
    deleted.map((r) => r.id),
  );
  return deleted.length;
}

// --- upstream detection (channel_observations) ---

/**
 * Removes the observations of deleted channels. Called after the channels' own DELETE, in its
 * transaction: that DELETE waits for any usage batch holding the channels (see addChannelObservations),
 * so this statement sees what such a batch wrote.
 */
async function deleteChannelObservations(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('channel_observations').where('channel_id', 'in', ids).execute();
}

/** A channel's observations: one row per (group, client type), in no particular order. */
export function channelObservations(db: Db, channelId: number) {
  return db
    .selectFrom('channel_observations')
    .select(['group', 'client_type', 'count', 'first_seen', 'last_seen'])
    .where('channel_id', '=', channelId)
    .execute();
}

export async function modelListsOfTag(db: Db, tag: string): Promise<string[]> {
  const rows = await db.selectFrom('channels').select('models').where('tag', '=', tag).execute();
  return rows.map((r) => r.models);
}

export function allChannels(db: Db): Promise<ChannelRow[]> {
  return db.selectFrom('channels').selectAll().orderBy('id').execute();
}

// Postgres takes at most 65,535 bound values per statement; 7 per ability row.
const ABILITY_CHUNK = 5_000;

/** Replaces the abilities of the given channels (all of them when `channelIds` is 'all'). */
export async function replaceAbilities(
  db: Db,
  channelIds: readonly number[] | 'all',
  rows: Insertable<AbilitiesTable>[],
): Promise<void> {
  if (channelIds === 'all') await db.deleteFrom('abilities').execute();
  else if (channelIds.length > 0) await db.deleteFrom('abilities').where('channel_id', 'in', channelIds).execute();
  for (let start = 0; start < rows.length; start += ABILITY_CHUNK) {
    await db
      .insertInto('abilities')
      .values(rows.slice(start, start + ABILITY_CHUNK))
      .execute();
  }
}

/** Distinct models some enabled channel serves, in name order. */
export async function enabledModels(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('abilities')
    .select('model')
    .distinct()
    .where('enabled', '=', true)
    .orderBy('model')
    .execute();
  return rows.map((r) => r.model);
}

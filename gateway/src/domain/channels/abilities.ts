import type { Insertable, Kysely, Transaction } from 'kysely';
import type { AbilitiesTable, Database } from '../../store/database.ts';
import { allChannels, replaceAbilities } from '../../store/repositories/channels.ts';
import { CHANNEL_STATUS, cleanList } from './input.ts';
import type { ChannelRow } from './view.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The routing index (reference §4.1): one ability per model × group of a channel, carrying the
 * channel's enabled flag, priority, weight and tag, so that routing reads one table.
 */
export function abilitiesOf(
  channel: Pick<ChannelRow, 'id' | 'models' | 'group' | 'status' | 'priority' | 'weight' | 'tag'>,
): Insertable<AbilitiesTable>[] {
  const rows: Insertable<AbilitiesTable>[] = [];
  for (const group of cleanList(channel.group)) {
    for (const model of cleanList(channel.models)) {
      rows.push({
        group,
        model,
        channel_id: channel.id,
        enabled: channel.status === CHANNEL_STATUS.enabled,
        priority: channel.priority,
        weight: channel.weight,
        tag: channel.tag,
      });
    }
  }
  return rows;
}

/** Makes the abilities of these channels mirror them; call inside the transaction that changed them. */
export async function syncAbilities(db: Db, channels: readonly ChannelRow[]): Promise<void> {
  await replaceAbilities(
    db,
    channels.map((c) => c.id),
    channels.flatMap(abilitiesOf),
  );
}

/** Rebuilds the whole table from every channel; answers how many channels it covered. */
export async function rebuildAbilities(db: Db): Promise<number> {
  const channels = await allChannels(db);
  await replaceAbilities(db, 'all', channels.flatMap(abilitiesOf));
  return channels.length;
}

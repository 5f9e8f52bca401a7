import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, LogsTable } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export const LOG_TYPE = { unknown: 0, topup: 1, consume: 2, manage: 3, system: 4, error: 5, refund: 6 } as const;

export async function insertLog(db: Db, log: Insertable<LogsTable>): Promise<void> {
  await db.insertInto('logs').values(log).execute();
}

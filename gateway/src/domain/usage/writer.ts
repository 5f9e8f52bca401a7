import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/database.ts';
import { trackedTransaction, transactionStatus } from '../../store/repositories/quota-leases.ts';
import {
  addChannelObservations,
  addChannelUsage,
  addQuotaBuckets,
  addTokenUsage,
  addUserUsage,
  insertLogRows,
} from '../../store/repositories/usage.ts';
import type { UsageBatch, UsageWriter } from './types.ts';

/**
 * Writes a batch in one transaction, so a batch that fails is not applied at all and can be retried
 * whole without counting anything twice (a lost COMMIT is looked up by its transaction id first). Logs, buckets and channel observations go first and the hot
 * counter rows (users, tokens, channels) last, so their row locks are held only for the last few statements.
 */
export function databaseUsageWriter(db: Kysely<Database>): UsageWriter {
  // A batch whose COMMIT failed in flight (the connection cut) may be written already: its transaction
  // id says, before the retry writes it again (the recorder retries the same batch object).
  let uncertain: { batch: UsageBatch; xid: string } | undefined;
  return {
    async write(batch: UsageBatch) {
      if (uncertain?.batch === batch) {
        const status = await transactionStatus(db, uncertain.xid);
        if (status === 'in progress') throw new Error(`usage write ${uncertain.xid} is still in progress`);
        uncertain = undefined;
        if (status === 'committed') return;
      }
      let xid: string | undefined;
      let ran = false;
      try {
        await trackedTransaction(
          db,
          (id) => {
            xid = id;
          },
          async (tx) => {
            await writeUsageBatch(tx, batch);
            ran = true;
          },
        );
      } catch (error) {
        if (ran && xid !== undefined) uncertain = { batch, xid };
        throw error;
      }
    },
  };
}

/**
 * Writes a batch inside the caller's transaction. `beforeCounters` runs between the rows nobody else
 * locks for long (logs, buckets, observations) and the counter rows: a caller charging balances there
 * (the ledger's lease and balance rows) locks every row in the same order as this writer and the
 * ledger do, so their transactions cannot deadlock.
 */
export async function writeUsageBatch(
  tx: Transaction<Database>,
  batch: UsageBatch,
  beforeCounters?: () => Promise<void>,
): Promise<void> {
  if (batch.logs.length > 0) await insertLogRows(tx, batch.logs);
  if (batch.quotaData.length > 0) await addQuotaBuckets(tx, batch.quotaData);
  if (batch.observations.length > 0) await addChannelObservations(tx, batch.observations);
  await beforeCounters?.();
  if (batch.users.length > 0) await addUserUsage(tx, batch.users);
  if (batch.tokens.length > 0) await addTokenUsage(tx, batch.tokens);
  if (batch.channels.length > 0) await addChannelUsage(tx, batch.channels);
}

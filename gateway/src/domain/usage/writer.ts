import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/database.ts';
import {
  addChannelObservations,
  addChannelUsage,
  addQuotaBuckets,
  addTokenUsage,
  addUserUsage,
  insertLogRows,
} from '../../store/repositories/usage.ts';
import type { QuotaLedger } from '../ledger/ledger.ts';
import type { UsageBatch, UsageWriter } from './types.ts';

/**
 * Writes a batch in one transaction, so a batch that fails is not applied at all and can be retried
 * whole without counting anything twice. Logs, buckets and channel observations go first and the hot
 * counter rows (users, tokens, channels) last, so their row locks are held only for the last few statements.
 * With the quota ledger, the same transaction takes the batch's logged spending off the balances
 * (QuotaLedger.writeLogged), and a retry after a lost COMMIT reply first asks whether the last attempt committed.
 */
export function databaseUsageWriter(db: Kysely<Database>, ledger?: Pick<QuotaLedger, 'writeLogged'>): UsageWriter {
  return {
    async write(batch: UsageBatch) {
      if (ledger) await ledger.writeLogged(batch, batch.charges, (tx, charge) => writeUsageBatch(tx, batch, charge));
      else if (batch.charges.length > 0) throw new Error('a usage batch with ledger charges needs the quota ledger');
      else await db.transaction().execute((tx) => writeUsageBatch(tx, batch));
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

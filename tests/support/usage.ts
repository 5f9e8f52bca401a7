import type { Gateway } from '../../gateway/src/gateway.ts';
import { eventually } from './wait.ts';

/** A consume log (type 2) as the relay wrote it, its `other` parsed. */
export interface ConsumeLog {
  id: number;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  model_name: string;
  content: string;
  other: Record<string, any>;
}

/**
 * Runs `call` and answers the consume log it produced, once the usage queue has written it. Calls
 * must not overlap: the first log after the call's start is taken as its own.
 */
export async function billed(gateway: Gateway, call: () => Promise<unknown>): Promise<ConsumeLog> {
  const db = gateway.store.db;
  const last = async () =>
    (await db.selectFrom('logs').select('id').where('type', '=', 2).orderBy('id', 'desc').executeTakeFirst())?.id ?? 0;
  const before = await last();
  await call();
  await eventually(last, (id) => id > before, 5000);
  const row = await db
    .selectFrom('logs')
    .selectAll()
    .where('type', '=', 2)
    .where('id', '>', before)
    .orderBy('id', 'asc')
    .executeTakeFirstOrThrow();
  return { ...row, other: JSON.parse(row.other || '{}') };
}

/**
 * Run as its own process by the store test: opens the embedded database in the folder given as the first
 * argument, commits one write, prints the ids of its child processes (the database's own process) and is
 * killed (SIGKILL) before it can close anything, as a crash would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { migrateToLatest, openStore } from '../../gateway/src/store/index.ts';

const store = await openStore({ dataDir: process.argv[2]! });
await migrateToLatest(store.db);
await store.db.insertInto('options').values({ key: 'crash', value: 'committed', updated_at: 1 }).execute();
const children = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
  readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
);
process.stdout.write(`${JSON.stringify(children.map(Number))}\n`, () => process.kill(process.pid, 'SIGKILL'));

/**
 * Run as its own process by the store test: opens the embedded database in the folder given as the first
 * argument, commits one write, and is killed (SIGKILL) before it can close anything, as a crash would.
 */
import { migrateToLatest, openStore } from '../../gateway/src/store/index.ts';

const store = await openStore({ dataDir: process.argv[2]! });
await migrateToLatest(store.db);
await store.db.insertInto('options').values({ key: 'crash', value: 'committed', updated_at: 1 }).execute();
process.kill(process.pid, 'SIGKILL');

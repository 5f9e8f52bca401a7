/**
 * Creates the embedded database's folder (initdb) and exits. The gateway runs this as a child process on
 * its first start: creating a folder takes PGlite about 1.1 GiB at its peak (a second Postgres instance for
 * initdb and a copy of its heap), and in a process of its own that memory goes back to the system when it
 * exits instead of staying in the gateway's heap until a garbage collection that may never come.
 */
import { PGlite } from '@electric-sql/pglite';
import { embeddedSettings } from './embedded-settings.ts';

const pglite = new PGlite(process.argv[2]!, embeddedSettings());
await pglite.waitReady;
await pglite.close();

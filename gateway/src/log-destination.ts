import { writeSync } from 'node:fs';
import { type DestinationStream, pino } from 'pino';

/**
 * Lines are held until about this many characters are waiting (about a hundred access lines)… A write
 * costs the event loop about the same whatever its size (libuv may complete a file write inline).
 */
const BATCH_CHARS = 32 * 1024;
/** …or this long has passed, so a quiet gateway's lines still show at once. */
const FLUSH_EVERY_MS = 100;

/**
 * Where the gateway's log lines go: the file descriptor (stdout), in batches written asynchronously.
 * A synchronous write cost a system call per request (the access line); now one write carries about
 * 32 KiB of lines, or whatever came in the last 100 ms. The lines are held here and joined once per
 * batch (sonic-boom's own batching measures its whole buffer again for every line). On exit, what is
 * held is handed over and written synchronously, so a clean shutdown (and process.exit after a fatal
 * line, or an uncaught exception) loses nothing; a process killed outright (SIGKILL, an out-of-memory
 * kill) loses the lines of its last 100 ms at most.
 */
export function logDestination(fd = 1): DestinationStream {
  const stream = pino.destination({ dest: fd, sync: false });
  let held: string[] = [];
  let heldChars = 0;
  const handOver = () => {
    if (held.length === 0) return;
    const batch = held.join('');
    held = [];
    heldChars = 0;
    stream.write(batch);
  };
  // Never keeps the process alive: on exit the held lines are written anyway.
  setInterval(handOver, FLUSH_EVERY_MS).unref();
  // On exit (after pino wrote what the stream holds), the held lines follow, synchronously.
  process.on('exit', () => {
    try {
      stream.flushSync();
      if (held.length > 0) writeAllSync(fd, Buffer.from(held.join('')));
      held = [];
    } catch {
      // A log that cannot be written (stdout gone) must not change how the process ends.
    }
  });
  return {
    write(line: string) {
      held.push(line);
      heldChars += line.length;
      if (heldChars >= BATCH_CHARS) handOver();
    },
  };
}

/** Writes all of `bytes`, waiting out a full pipe (EAGAIN) a bounded number of times. */
function writeAllSync(fd: number, bytes: Buffer): void {
  let offset = 0;
  for (let busy = 0; offset < bytes.length && busy < 1000; ) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      busy++;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

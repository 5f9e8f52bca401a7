import { type DestinationStream, pino } from 'pino';

/**
 * Lines are held until this many bytes are waiting (about a hundred access lines)… A write costs the
 * event loop about the same whatever its size (libuv may complete a file write inline), so fewer is better.
 */
const BATCH_BYTES = 32 * 1024;
/** What one write may carry: above the batch, so that a batch goes out in one. */
const MAX_WRITE_BYTES = 64 * 1024;
/** …or this long has passed, so a quiet gateway's lines still show at once. */
const FLUSH_EVERY_MS = 100;

/**
 * Where the gateway's log lines go: the file descriptor (stdout), written asynchronously in batches.
 * A synchronous write cost a system call per request (the access line); now a write carries about
 * 32 KiB of lines, or whatever came in the last 100 ms. pino writes what is still held synchronously
 * when the process exits, so a clean shutdown (and process.exit after a fatal line, or an uncaught
 * exception) loses nothing; a process killed outright (SIGKILL, an out-of-memory kill) loses the
 * lines of its last 100 ms at most.
 */
export function logDestination(fd = 1): DestinationStream {
  const stream = pino.destination({ dest: fd, sync: false, minLength: BATCH_BYTES, maxWrite: MAX_WRITE_BYTES });
  let held = false;
  const write = stream.write.bind(stream);
  stream.write = (line: string) => {
    held = true;
    return write(line);
  };
  // Never keeps the process alive: on exit the held lines are written anyway.
  setInterval(() => {
    if (!held) return;
    held = false;
    stream.flush();
  }, FLUSH_EVERY_MS).unref();
  return stream;
}

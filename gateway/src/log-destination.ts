import { type DestinationStream, pino } from 'pino';

/**
 * Where the gateway's log lines go: the file descriptor (stdout), written asynchronously. A synchronous
 * write cost a system call per request (the access line); asynchronously, the lines that arrive while a
 * write is under way go out together in the next one. pino writes whatever is still buffered
 * synchronously when the process exits, so a clean shutdown (and process.exit after a fatal line, or an
 * uncaught exception) loses nothing; a process killed outright (SIGKILL, an out-of-memory kill) loses
 * the lines not yet written, at most those of the last few milliseconds.
 */
export function logDestination(fd = 1): DestinationStream {
  return pino.destination({ dest: fd, sync: false });
}

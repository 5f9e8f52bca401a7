/**
 * One memory-reducing garbage collection once the gateway listens. Starting allocates fast (modules, routes,
 * schemas, the first queries), so V8 grows its young generation to its maximum and keeps it, with the start's
 * garbage: it shrinks the heap only in a collection at a low allocation rate, and an idle gateway allocates too
 * little to run one. The inspector protocol (in process, no port) asks V8 for exactly that collection.
 */
export async function collectStartupGarbage(): Promise<void> {
  try {
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    try {
      await session.post('HeapProfiler.collectGarbage');
    } finally {
      session.disconnect();
    }
  } catch {
    // A Node built without the inspector: the memory stays as it is.
  }
}

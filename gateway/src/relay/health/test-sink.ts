import type { ClientSink } from '../exchange/sink.ts';

/**
 * Where a channel test's answer goes: nowhere. The exchange has already metered it; the test only
 * needs to know that the upstream answered, so the sink takes every byte at once and never leaves.
 */
export function discardingSink(): ClientSink {
  let started = false;
  return {
    answer: async () => {
      started = true;
    },
    open: () => {
      started = true;
    },
    write: () => true,
    drained: async () => {},
    ping: () => {},
    end: () => {},
    destroy: () => {},
    onGone: () => () => {},
    get started() {
      return started;
    },
  };
}

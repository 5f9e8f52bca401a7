import type { Bus } from '../cluster/index.ts';

/** Bus channel announcing changes that affect API-key authentication (tokens, their owners). */
export const AUTH_CHANGES_CHANNEL = 'auth-changes';

export interface AuthChange {
  tokens?: number[];
  users?: number[];
}

/** Tells every pod's key cache to forget these tokens/users; best effort (the cache also expires). */
export async function announceAuthChange(bus: Bus | undefined, change: AuthChange): Promise<void> {
  if (!bus) return;
  try {
    await bus.publish(AUTH_CHANGES_CHANNEL, JSON.stringify(change));
  } catch {
    // The cache's time-to-live bounds how stale a missed message can leave it.
  }
}

/** The overrun bound of requests without max_tokens (issue 17): reserve a completion budget, top it up, cut. */
export { type CompletionBudget, completionBudget, completionQuota, DEFAULT_COMPLETION_OPTION } from './budget.ts';
export { deliveredUsage } from './delivered.ts';
export { QUOTA_EXHAUSTED, streamErrorEvents } from './ending.ts';
export { type StreamBudget, type StreamCheck, StreamGuard, type StreamGuardSpec } from './guard.ts';
export { streamGuardFor } from './hook.ts';

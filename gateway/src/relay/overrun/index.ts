/** The overrun bound of requests without max_tokens (issue 17): reserve a completion budget, top it up, cut. */
export { type CompletionBudget, completionBudget } from './budget.ts';
export { deliveredUsage } from './delivered.ts';
export type { StreamBudget } from './guard.ts';
export { streamGuardFor } from './hook.ts';

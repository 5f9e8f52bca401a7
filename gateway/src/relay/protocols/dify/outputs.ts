import type { Json } from '../../convert/types.ts';

/**
 * The answer text of a workflow run's outputs: its `text` / `answer` / `result` output, the only
 * output when there is one string, else all outputs as JSON (a client still sees everything).
 */
export function workflowText(outputs: unknown): string {
  if (typeof outputs === 'string') return outputs;
  if (!outputs || typeof outputs !== 'object') return '';
  const values = outputs as Json;
  for (const name of ['text', 'answer', 'result', 'output']) {
    if (typeof values[name] === 'string') return values[name];
  }
  const entries = Object.values(values);
  if (entries.length === 1 && typeof entries[0] === 'string') return entries[0];
  return entries.length === 0 ? '' : JSON.stringify(values);
}

/** Why a workflow run did not succeed, for the error its client gets. */
export const workflowFailure = (run: Json) =>
  `the Dify workflow ${run.status === 'stopped' ? 'was stopped' : 'failed'}${run.error ? `: ${run.error}` : ''}`;

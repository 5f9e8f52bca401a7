/** How often a task log asks again while a visible task is unfinished: live, without hammering the gateway. */
export const LIVE_REFRESH_MS = 3000;

/** Terminal task statuses (spec doc 3 §4): nothing changes after these. */
const FINISHED = new Set(['SUCCESS', 'FAILURE']);

export function isFinished(status: unknown): boolean {
  return typeof status === 'string' && FINISHED.has(status);
}

/**
 * react-admin List `queryOptions` that refresh the page of tasks every LIVE_REFRESH_MS while any of its
 * rows is unfinished, and stop once all are finished (react-query re-reads this after every answer).
 */
export const liveQueryOptions = {
  refetchInterval: (query: { state: { data?: { data?: Array<Record<string, unknown>> } | undefined } }) =>
    (query.state.data?.data ?? []).some((task) => !isFinished(task.status)) ? LIVE_REFRESH_MS : false,
};

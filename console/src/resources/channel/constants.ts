/**
 * Channel constants of spec doc 2 §4 and §9: statuses, response-time colours, local storage keys.
 * Channel types are not here: the console reads them from the gateway (GET /api/channel/types).
 */

export const CHANNEL_STATUS = { enabled: 1, disabled: 2, autoDisabled: 3 } as const;

/** Response time colours (spec doc 2 §9): 0 untested, ≤1 s green, ≤3 s lime, ≤5 s yellow, else red. */
export type ResponseColour = 'untested' | 'green' | 'lime' | 'yellow' | 'red';
export function responseColour(ms: number): ResponseColour {
  if (!ms) return 'untested';
  if (ms <= 1000) return 'green';
  if (ms <= 3000) return 'lime';
  if (ms <= 5000) return 'yellow';
  return 'red';
}
export const RESPONSE_COLOURS: Record<ResponseColour, string> = {
  untested: '#9e9e9e',
  green: '#2e7d32',
  lime: '#7cb342',
  yellow: '#f9a825',
  red: '#d32f2f',
};

/** Local storage (spec doc 2 §9): remembered columns, page size and id sort, plus tag mode. */
export const COLUMNS_KEY = 'channels-table-columns';
export const PAGE_SIZE_KEY = 'page-size';
export const ID_SORT_KEY = 'id-sort';
export const TAG_MODE_KEY = 'tag-mode';
export const PAGE_SIZES = [10, 20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 10;

/** Table priority and weight minimums (spec doc 2 §5). */
export const PRIORITY_MIN = -999;
export const WEIGHT_MIN = 0;

/**
 * Requests and tokens per minute as the gateway takes them on tokens and users:
 * `{ "*": { rpm, tpm }, "<model>": { rpm, tpm } }` (README "Rate limits"). The editor works on rows.
 */
export type RateLimits = Record<string, { rpm?: number; tpm?: number }>;

/** One rule as typed: the model ('*' for every other model) and the two limits as text ('' for none). */
export interface RateLimitRow {
  model: string;
  rpm: string;
  tpm: string;
}

export const ANY_MODEL = '*';

/** The rows of stored limits, "*" first. */
export function rowsOf(limits: unknown): RateLimitRow[] {
  if (!limits || typeof limits !== 'object' || Array.isArray(limits)) return [];
  const text = (value: unknown) => (typeof value === 'number' && value > 0 ? String(value) : '');
  return Object.entries(limits as RateLimits)
    .sort(([a], [b]) => (a === ANY_MODEL ? -1 : b === ANY_MODEL ? 1 : a.localeCompare(b)))
    .map(([model, rule]) => ({ model, rpm: text(rule?.rpm), tpm: text(rule?.tpm) }));
}

const blank = (row: RateLimitRow) => row.model.trim() === '' && row.rpm.trim() === '' && row.tpm.trim() === '';
const wholeOrEmpty = (text: string) => /^\d*$/.test(text.trim());

/** Why the rows cannot be saved, as a message key; blank rows are ignored. */
export function rateRowsProblem(rows: readonly RateLimitRow[]): string | undefined {
  const seen = new Set<string>();
  for (const row of rows.filter((r) => !blank(r))) {
    const model = row.model.trim();
    if (model === '') return 'rate_limits.validation.model_required';
    if (!wholeOrEmpty(row.rpm) || !wholeOrEmpty(row.tpm)) return 'rate_limits.validation.whole_number';
    if (seen.has(model)) return 'rate_limits.validation.duplicate';
    seen.add(model);
  }
  return undefined;
}

/** The limits to send: blank rows and empty or 0 limits left out. Check `rateRowsProblem` first. */
export function limitsOf(rows: readonly RateLimitRow[]): RateLimits {
  const limits: RateLimits = {};
  for (const row of rows) {
    const model = row.model.trim();
    const rpm = Number(row.rpm.trim() || 0);
    const tpm = Number(row.tpm.trim() || 0);
    if (model === '' || (rpm <= 0 && tpm <= 0)) continue;
    limits[model] = { ...(rpm > 0 ? { rpm } : {}), ...(tpm > 0 ? { tpm } : {}) };
  }
  return limits;
}

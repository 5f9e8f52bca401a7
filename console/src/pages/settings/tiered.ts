import { compileExpression, ExprError } from '../../../../gateway/src/domain/billing/expr/index.ts';
import { isTimeZone } from '../../../../gateway/src/domain/time-zones.ts';
import type { OptionValues } from './options.ts';

/**
 * The expression (tiered) pricing editor's model (README "Tiered and conditional pricing"): one row per
 * model of billing_setting.billing_mode / billing_expr. Expressions are checked here by the gateway's own
 * parser, so the editor points at the same position the server would refuse.
 */

export const BILLING_MODE_KEY = 'billing_setting.billing_mode';
export const BILLING_EXPR_KEY = 'billing_setting.billing_expr';
export const TIMEZONE_KEY = 'billing_setting.timezone';
export const TIERED_MODE = 'tiered_expr';

export interface TieredRow {
  model: string;
  /** On: the expression prices the model; off: the expression is kept but ratios price it. */
  tiered: boolean;
  expression: string;
}

export interface RowProblem {
  field: 'model' | 'expression';
  /** i18n key: settings.tiered.problems.* */
  message: string;
  values?: Record<string, unknown>;
}

function record(options: OptionValues, key: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(options[key] || '{}');
    if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(
      Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return {};
  }
}

/** Every model named by either option, sorted. */
export function tieredRows(options: OptionValues): TieredRow[] {
  const modes = record(options, BILLING_MODE_KEY);
  const expressions = record(options, BILLING_EXPR_KEY);
  const models = [...new Set([...Object.keys(modes), ...Object.keys(expressions)])].sort();
  return models.map((model) => ({
    model,
    tiered: modes[model] === TIERED_MODE,
    expression: expressions[model] ?? '',
  }));
}

/** The two maps the rows stand for: a model is in the mode map only when on, in the other when it has text. */
export function tieredMaps(rows: readonly TieredRow[]): {
  modes: Record<string, string>;
  expressions: Record<string, string>;
} {
  const modes: Record<string, string> = {};
  const expressions: Record<string, string> = {};
  for (const row of rows) {
    const model = row.model.trim();
    if (model === '') continue;
    if (row.tiered) modes[model] = TIERED_MODE;
    if (row.expression.trim() !== '') expressions[model] = row.expression.trim();
  }
  return { modes, expressions };
}

/** The option writes the edit needs: only the keys whose value changed. */
export function tieredChanges(
  options: OptionValues,
  rows: readonly TieredRow[],
  timeZone: string,
): Array<{ key: string; value: string }> {
  const { modes, expressions } = tieredMaps(rows);
  const changes: Array<{ key: string; value: string }> = [];
  // Expressions first: a model switched on must have its expression stored before its mode.
  for (const [key, next] of [
    [BILLING_EXPR_KEY, expressions],
    [BILLING_MODE_KEY, modes],
  ] as const) {
    if (JSON.stringify(sorted(record(options, key))) !== JSON.stringify(sorted(next))) {
      changes.push({ key, value: JSON.stringify(next, null, 2) });
    }
  }
  if (timeZone.trim() !== (options[TIMEZONE_KEY] ?? 'UTC')) changes.push({ key: TIMEZONE_KEY, value: timeZone.trim() });
  return changes;
}

const sorted = (map: Record<string, string>) =>
  Object.fromEntries(Object.entries(map).sort(([a], [b]) => a.localeCompare(b)));

/** What is wrong with one expression, in the reader's language, or undefined when it compiles. */
export function expressionProblem(
  source: string,
): { position: number; reason: { zh: string; en: string } } | undefined {
  if (source.trim() === '') return undefined;
  try {
    compileExpression(source);
    return undefined;
  } catch (error) {
    if (error instanceof ExprError) return { position: error.position + 1, reason: error.reason };
    throw error;
  }
}

/** Each row's first problem, by index: no model name, a model twice, an expression missing or invalid. */
export function rowProblems(rows: readonly TieredRow[], language: 'zh' | 'en'): Record<number, RowProblem> {
  const problems: Record<number, RowProblem> = {};
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const model = row.model.trim();
    if (model === '') problems[index] = { field: 'model', message: 'settings.tiered.problems.no_model' };
    else if (seen.has(model)) problems[index] = { field: 'model', message: 'settings.tiered.problems.duplicate' };
    else if (row.tiered && row.expression.trim() === '') {
      problems[index] = { field: 'expression', message: 'settings.tiered.problems.no_expression' };
    } else {
      const problem = expressionProblem(row.expression);
      if (problem) {
        problems[index] = {
          field: 'expression',
          message: 'settings.tiered.problems.invalid',
          values: { position: problem.position, reason: problem.reason[language] },
        };
      }
    }
    seen.add(model);
  });
  return problems;
}

/** True for a time zone the clock functions can read ("UTC", "Asia/Shanghai"). */
export const validTimeZone = (zone: string) => isTimeZone(zone.trim());

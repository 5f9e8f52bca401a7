/**
 * Settings page plumbing (spec doc 2 §3 Option, §5 Options, §7 Options): fields, checks, and which keys
 * changed. Values are strings as the gateway stores them; booleans are "true" and "false".
 */

export type FieldKind = 'switch' | 'number' | 'text' | 'textarea' | 'json' | 'select' | 'secret';

export interface OptionField {
  key: string;
  kind: FieldKind;
  /** i18n key of the label. */
  label: string;
  /** i18n key of a help text. */
  help?: string;
  min?: number;
  max?: number;
  step?: number;
  integer?: boolean;
  /** select: values and their label keys. */
  choices?: ReadonlyArray<{ id: string; name: string }>;
  /** switch: asks before turning it off; cancelling leaves it on (spec doc 1 §4, password login). */
  confirmOff?: { title: string; content: string };
}

export interface OptionSectionDef {
  id: string;
  /** i18n key of the section title. */
  title: string;
  fields: OptionField[];
}

export type OptionValues = Record<string, string>;

/** GET /api/option/ -> a key/value map. */
export function optionMap(list: Array<{ key: string; value: string }> | undefined): OptionValues {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, String(value ?? '')]));
}

function parsesAsJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export interface FieldProblem {
  /** i18n key: settings.validation.* */
  message: string;
  values?: Record<string, unknown>;
}

/** One field's check (spec doc 2 §5 Options): JSON must parse, numbers within their bounds. */
export function checkField(field: OptionField, value: string): FieldProblem | undefined {
  if (field.kind === 'json') {
    return parsesAsJson(value) ? undefined : { message: 'settings.validation.invalid_json' };
  }
  if (field.kind === 'number') {
    const text = value.trim();
    const n = Number(text);
    if (text === '' || !Number.isFinite(n)) return { message: 'settings.validation.number' };
    if (field.integer && !Number.isInteger(n)) return { message: 'settings.validation.integer' };
    if (field.min !== undefined && n < field.min) {
      return { message: 'settings.validation.min', values: { min: field.min } };
    }
    if (field.max !== undefined && n > field.max) {
      return { message: 'settings.validation.max', values: { max: field.max } };
    }
  }
  return undefined;
}

/** Every field's problem, by key. */
export function checkFields(fields: readonly OptionField[], values: OptionValues): Record<string, FieldProblem> {
  const problems: Record<string, FieldProblem> = {};
  for (const field of fields) {
    const problem = checkField(field, values[field.key] ?? '');
    if (problem) problems[field.key] = problem;
  }
  return problems;
}

/** Numbers compare by value ("1.0" is "1"); JSON by its parsed form; the rest as text. */
function same(field: OptionField, before: string, after: string): boolean {
  if (field.kind === 'number') return Number(before) === Number(after) && before.trim() !== '';
  if (field.kind === 'json') {
    try {
      return JSON.stringify(JSON.parse(before || 'null')) === JSON.stringify(JSON.parse(after || 'null'));
    } catch {
      return before === after;
    }
  }
  return before === after;
}

/**
 * The keys to write (spec doc 2 §7: one PUT per changed key): fields whose value differs from what was
 * read. A secret field left empty keeps the stored secret (the gateway never answers secrets).
 */
export function changedOptions(
  fields: readonly OptionField[],
  original: OptionValues,
  values: OptionValues,
): Array<{ key: string; value: string }> {
  const changes: Array<{ key: string; value: string }> = [];
  for (const field of fields) {
    const after = values[field.key] ?? '';
    if (field.kind === 'secret') {
      if (after !== '') changes.push({ key: field.key, value: after });
      continue;
    }
    const before = original[field.key] ?? '';
    if (!same(field, before, after)) {
      changes.push({ key: field.key, value: field.kind === 'number' ? String(Number(after)) : after });
    }
  }
  return changes;
}

/** The form's starting values: what was read, secrets empty. */
export function initialValues(fields: readonly OptionField[], options: OptionValues): OptionValues {
  return Object.fromEntries(
    fields.map((field) => [field.key, field.kind === 'secret' ? '' : (options[field.key] ?? '')]),
  );
}

/** What a save says (spec doc 2 §8): saved, some failed, or all failed. */
export function saveOutcome(results: Array<{ ok: boolean }>): 'saved' | 'partial' | 'failed' {
  const failed = results.filter((result) => !result.ok).length;
  if (failed === 0) return 'saved';
  return failed === results.length ? 'failed' : 'partial';
}

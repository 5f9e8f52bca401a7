import { AppError, type ErrorSpec } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { channelType, otherDefault, typeLabel } from './registry.ts';

/**
 * A JSON object held as text, as clients send it: the text, or (new-api's clients) the object itself.
 * "", "null", "{}" and {} all mean "no value".
 */
export type JsonObjectInput = string | Record<string, unknown>;

/**
 * Channel fields as the API takes them (spec doc 2 §3); every field is optional on update. `null` is
 * never a value here (the API drops it as absent); an empty string clears a text field.
 */
export interface ChannelInput {
  type?: number | undefined;
  name?: string | undefined;
  key?: string | undefined;
  openai_organization?: string | undefined;
  test_model?: string | undefined;
  status?: number | undefined;
  weight?: number | undefined;
  priority?: number | undefined;
  base_url?: string | undefined;
  other?: string | undefined;
  /** Comma string in the API; a list is accepted too. */
  models?: string | string[] | undefined;
  /** Comma string in the API. */
  group?: string | undefined;
  /** The form's list of groups; wins over `group` when both are sent. */
  groups?: string[] | undefined;
  model_mapping?: JsonObjectInput | undefined;
  status_code_mapping?: JsonObjectInput | undefined;
  auto_ban?: number | undefined;
  tag?: string | undefined;
  setting?: JsonObjectInput | undefined;
  settings?: JsonObjectInput | undefined;
  param_override?: JsonObjectInput | undefined;
  header_override?: JsonObjectInput | undefined;
  max_input_tokens?: number | undefined;
  remark?: string | undefined;
}

/** The configuration columns a channel's input sets (never the key, never runtime state). */
export interface ChannelConfig {
  type: number;
  name: string;
  openai_organization: string | null;
  test_model: string | null;
  status: number;
  weight: number;
  priority: number;
  base_url: string | null;
  other: string;
  models: string;
  group: string;
  model_mapping: string | null;
  status_code_mapping: string | null;
  auto_ban: number;
  tag: string | null;
  setting: string | null;
  settings: string | null;
  param_override: string | null;
  header_override: string | null;
  max_input_tokens: number;
  remark: string;
}

export type ChannelConfigField = keyof ChannelConfig;

export const CHANNEL_STATUS = { enabled: 1, disabled: 2, autoDisabled: 3 } as const;

/** Spec doc 2 §9: type 1, auto_ban 1, groups [default], priority 0, weight 0. */
export const CHANNEL_DEFAULTS: ChannelConfig = {
  type: 1,
  name: '',
  openai_organization: null,
  test_model: null,
  status: CHANNEL_STATUS.enabled,
  weight: 0,
  priority: 0,
  base_url: null,
  other: '',
  models: '',
  group: 'default',
  model_mapping: null,
  status_code_mapping: null,
  auto_ban: 1,
  tag: null,
  setting: null,
  settings: null,
  param_override: null,
  header_override: null,
  max_input_tokens: 0,
  remark: '',
};

/** A hint the answer carries when the input is accepted but probably not what was meant. */
export type ChannelWarning = 'base_url_ends_with_v1';

/** Comma string or list -> trimmed, distinct, non-empty names, in the order given. */
export function cleanList(value: string | readonly string[] | null | undefined): string[] {
  if (value === null || value === undefined) return [];
  const parts = typeof value === 'string' ? value.split(',') : value;
  return [...new Set(parts.map((p) => p.trim()).filter((p) => p !== ''))];
}

/** Whether a JSON-object field holds no value: "", "null", "{}" or {} (what new-api's clients send back). */
export function isEmptyJsonObject(value: JsonObjectInput | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value !== 'string') return Object.keys(value).length === 0;
  const text = value.trim();
  if (text === '' || text === 'null') return true;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length === 0;
  } catch {
    return false;
  }
}

/** An optional JSON object held as text: empty (see isEmptyJsonObject) means none; anything but an object is refused. */
export function jsonObjectText(
  value: JsonObjectInput | null | undefined,
  error: ErrorSpec,
  params: Record<string, string> = {},
  values?: (value: unknown) => boolean,
): string | null {
  if (isEmptyJsonObject(value)) return null;
  const text = typeof value === 'string' ? value.trim() : JSON.stringify(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError(error, params);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AppError(error, params);
  if (values && !Object.values(parsed).every(values)) throw new AppError(error, params);
  return text;
}

export function checkModelMapping(text: JsonObjectInput | null | undefined): string | null {
  // new-api reads the mapping as {requested: upstream} strings; anything else would break requests later.
  return jsonObjectText(text, CHANNEL_ERRORS.CHANNEL_MODEL_MAPPING_INVALID, {}, (v) => typeof v === 'string');
}

export function checkPriority(value: number): number {
  if (!Number.isSafeInteger(value)) throw new AppError(CHANNEL_ERRORS.CHANNEL_PRIORITY_NOT_INTEGER);
  return value;
}

export function checkWeight(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_WEIGHT_INVALID);
  return value;
}

export function checkStatus(value: number): number {
  if (value !== 1 && value !== 2 && value !== 3) throw new AppError(CHANNEL_ERRORS.CHANNEL_STATUS_INVALID);
  return value;
}

/** Trailing slashes stripped (spec doc 2 §5); empty means the type's default. */
export function cleanBaseUrl(value: string | undefined): string | null {
  const trimmed = (value ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new AppError(CHANNEL_ERRORS.CHANNEL_BASE_URL_INVALID, { base_url: trimmed });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError(CHANNEL_ERRORS.CHANNEL_BASE_URL_INVALID, { base_url: trimmed });
  }
  return trimmed;
}

const emptyToNull = (value: string | undefined): string | null => {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
};

/**
 * Validates the fields present in `input` and turns them into columns, in the order of the spec's
 * checks (name and key, models, model mapping, then the rest). On create, `base` is the defaults;
 * on update, the stored channel, so checks that depend on other fields (type 18's `other`) see the result.
 */
export function applyChannelInput(
  input: ChannelInput,
  base: ChannelConfig,
): { config: ChannelConfig; changed: ChannelConfigField[]; warnings: ChannelWarning[] } {
  const next: ChannelConfig = { ...base };
  const warnings: ChannelWarning[] = [];
  if (input.name !== undefined) {
    next.name = input.name.trim();
    if (next.name === '') throw new AppError(CHANNEL_ERRORS.CHANNEL_NAME_EMPTY);
  }
  if (input.models !== undefined) {
    const models = cleanList(input.models);
    if (models.length === 0) throw new AppError(CHANNEL_ERRORS.CHANNEL_MODELS_REQUIRED);
    next.models = models.join(',');
  }
  if (input.model_mapping !== undefined) next.model_mapping = checkModelMapping(input.model_mapping);
  const jsonField = (field: 'status_code_mapping' | 'setting' | 'settings' | 'param_override' | 'header_override') => {
    const value = input[field];
    if (value !== undefined) next[field] = jsonObjectText(value, CHANNEL_ERRORS.CHANNEL_JSON_FIELD_INVALID, { field });
  };
  jsonField('status_code_mapping');
  jsonField('setting');
  jsonField('settings');
  jsonField('param_override');
  jsonField('header_override');
  if (input.type !== undefined) {
    const type = channelType(input.type);
    if (!type) throw new AppError(CHANNEL_ERRORS.CHANNEL_TYPE_UNKNOWN, { type: input.type });
    // Stored rows of a type no longer offered stay editable (disable, delete); nothing new may become one.
    if (!type.offered && input.type !== base.type) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_TYPE_UNSUPPORTED, {
        type: typeLabel(type.id),
        reason_zh: type.reason.zh,
        reason_en: type.reason.en,
      });
    }
    next.type = input.type;
  }
  if (input.priority !== undefined) next.priority = checkPriority(input.priority);
  if (input.weight !== undefined) next.weight = checkWeight(input.weight);
  if (input.status !== undefined) next.status = checkStatus(input.status);
  if (input.auto_ban !== undefined) next.auto_ban = input.auto_ban === 0 ? 0 : 1;
  if (input.base_url !== undefined) next.base_url = cleanBaseUrl(input.base_url);
  if (input.groups !== undefined || input.group !== undefined) {
    const groups = cleanList(input.groups ?? input.group);
    next.group = groups.length > 0 ? groups.join(',') : CHANNEL_DEFAULTS.group;
  }
  if (input.other !== undefined) next.other = input.other.trim();
  if (next.other === '') next.other = otherDefault(next.type) ?? '';
  const otherField = channelType(next.type)?.other;
  if (otherField?.required && next.other === '') {
    throw new AppError(CHANNEL_ERRORS.CHANNEL_OTHER_REQUIRED, {
      type: typeLabel(next.type),
      label_zh: otherField.label.zh,
      label_en: otherField.label.en,
    });
  }
  if (otherField?.choices && !otherField.choices.includes(next.other)) {
    throw new AppError(CHANNEL_ERRORS.CHANNEL_OTHER_INVALID, {
      type: typeLabel(next.type),
      choices: otherField.choices.join(', '),
    });
  }
  if (input.openai_organization !== undefined) next.openai_organization = emptyToNull(input.openai_organization);
  if (input.test_model !== undefined) next.test_model = emptyToNull(input.test_model);
  if (input.tag !== undefined) next.tag = emptyToNull(input.tag);
  if (input.max_input_tokens !== undefined) next.max_input_tokens = input.max_input_tokens;
  if (input.remark !== undefined) next.remark = input.remark;

  if (next.base_url && /\/v1$/i.test(next.base_url)) warnings.push('base_url_ends_with_v1');
  const changed = (Object.keys(next) as ChannelConfigField[]).filter((field) => next[field] !== base[field]);
  return { config: next, changed, warnings };
}

/** The configuration columns of a stored channel. */
export function configOf(row: ChannelConfig): ChannelConfig {
  const config = {} as Record<ChannelConfigField, unknown>;
  for (const field of Object.keys(CHANNEL_DEFAULTS) as ChannelConfigField[]) config[field] = row[field];
  return config as ChannelConfig;
}

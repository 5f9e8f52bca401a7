/** A channel as GET /api/channel/{id} and the lists answer it (spec doc 2 §3; the key is always empty). */
export interface Channel {
  id: number;
  type: number;
  name: string;
  key: string;
  openai_organization: string | null;
  test_model: string | null;
  status: number;
  weight: number;
  priority: number;
  created_time: number;
  test_time: number;
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  models: string;
  group: string;
  used_quota: number;
  model_mapping: string | null;
  status_code_mapping: string | null;
  auto_ban: number;
  other_info: string | null;
  tag: string | null;
  setting: string | null;
  settings: string | null;
  param_override: string | null;
  header_override: string | null;
  channel_info?: { is_multi_key?: boolean; multi_key_size?: number; multi_key_mode?: string } | null;
  max_input_tokens: number;
  remark: string;
  managed_by: string | null;
  managed_namespace: string | null;
  managed_name: string | null;
}

/** How the key field of a new channel is read (gateway `mode`). */
export type CreateMode = 'single' | 'batch' | 'multi_to_single';

/** The create/edit drawer's values: lists where the API has comma strings, text for numbers being typed. */
export interface ChannelFormValues {
  type: number;
  name: string;
  base_url: string;
  key: string;
  openai_organization: string;
  other: string;
  models: string[];
  model_mapping: string;
  groups: string[];
  priority: string;
  weight: string;
  tag: string;
  auto_ban: boolean;
  test_model: string;
  status_code_mapping: string;
  param_override: string;
  header_override: string;
  setting: string;
  remark: string;
  max_input_tokens: string;
  create_mode: CreateMode;
  multi_key_mode: 'random' | 'polling';
  key_mode: 'replace' | 'append';
}

/** Spec doc 2 §9: type 1, auto_ban 1, groups [default], priority 0, weight 0. */
export function defaultChannelValues(): ChannelFormValues {
  return {
    type: 1,
    name: '',
    base_url: '',
    key: '',
    openai_organization: '',
    other: '',
    models: [],
    model_mapping: '',
    groups: ['default'],
    priority: '0',
    weight: '0',
    tag: '',
    auto_ban: true,
    test_model: '',
    status_code_mapping: '',
    param_override: '',
    header_override: '',
    setting: '',
    remark: '',
    max_input_tokens: '0',
    create_mode: 'single',
    multi_key_mode: 'random',
    key_mode: 'replace',
  };
}

export const splitList = (value: string | null | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** The drawer's values for a saved channel. */
export function channelToValues(channel: Channel): ChannelFormValues {
  return {
    ...defaultChannelValues(),
    type: channel.type,
    name: channel.name,
    base_url: channel.base_url ?? '',
    openai_organization: channel.openai_organization ?? '',
    other: channel.other ?? '',
    models: splitList(channel.models),
    model_mapping: channel.model_mapping ?? '',
    groups: splitList(channel.group),
    priority: String(channel.priority ?? 0),
    weight: String(channel.weight ?? 0),
    tag: channel.tag ?? '',
    auto_ban: channel.auto_ban !== 0,
    test_model: channel.test_model ?? '',
    status_code_mapping: channel.status_code_mapping ?? '',
    param_override: channel.param_override ?? '',
    header_override: channel.header_override ?? '',
    setting: channel.setting ?? '',
    remark: channel.remark ?? '',
    max_input_tokens: String(channel.max_input_tokens ?? 0),
    multi_key_mode: channel.channel_info?.multi_key_mode === 'polling' ? 'polling' : 'random',
  };
}

/** Whether a text is empty or parses as JSON. */
export function isJsonOrEmpty(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The channel setting `pass_through_body_enabled` in the setting JSON text: undefined when the text is
 * not a JSON object (the switch then stays off and disabled until the JSON is fixed).
 */
export function passThroughOf(setting: string): boolean | undefined {
  const parsed = settingObject(setting);
  return parsed && parsed.pass_through_body_enabled === true;
}

/** The setting JSON text with `pass_through_body_enabled` switched, other entries kept as they are. */
export function withPassThrough(setting: string, enabled: boolean): string {
  const parsed = settingObject(setting) ?? {};
  const next: Record<string, unknown> = { ...parsed };
  // Off is left out, as the other switches are, so that an untouched setting stays empty.
  if (enabled) next.pass_through_body_enabled = true;
  else delete next.pass_through_body_enabled;
  return Object.keys(next).length === 0 ? '' : JSON.stringify(next, null, 2);
}

function settingObject(setting: string): Record<string, unknown> | undefined {
  if (setting.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(setting);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** JSON fields of the drawer besides the model mapping, with the label key each message names. */
export const JSON_FIELDS = [
  ['status_code_mapping', 'channel.form.status_code_mapping'],
  ['param_override', 'channel.form.param_override'],
  ['header_override', 'channel.form.header_override'],
  ['setting', 'channel.form.setting'],
] as const;

export interface ChannelProblem {
  /** i18n key of the message (spec doc 2 §5 "Channel"). */
  message: string;
  /** Interpolation, e.g. the field label key. */
  field?: string;
}

/**
 * The drawer's checks, in the spec's order (doc 2 §5): name and key for a new channel, at least one
 * model, the model mapping as JSON, then the other JSON fields. Answers the first problem, or nothing.
 */
export function validateChannel(values: ChannelFormValues, isNew: boolean): ChannelProblem | undefined {
  if (isNew && (values.name.trim() === '' || values.key.trim() === '')) {
    return { message: 'channel.validation.name_key_required' };
  }
  if (!isNew && values.name.trim() === '') return { message: 'channel.validation.name_key_required' };
  if (!Array.isArray(values.models)) return { message: 'channel.validation.duplicate_submit' };
  if (values.models.length === 0) return { message: 'channel.validation.models_required' };
  if (!isJsonOrEmpty(values.model_mapping)) return { message: 'channel.validation.model_mapping_json' };
  for (const [field, label] of JSON_FIELDS) {
    if (!isJsonOrEmpty(values[field])) return { message: 'channel.validation.json_field', field: label };
  }
  if (!/^-?\d+$/.test(values.priority.trim() || '0')) return { message: 'channel.validation.priority_integer' };
  if (!/^\d+$/.test(values.weight.trim() || '0')) return { message: 'channel.validation.weight_non_negative' };
  return undefined;
}

/** A base URL ending in /v1 is not needed and may break requests (spec doc 2 §5): asks first. */
export function baseUrlEndsWithV1(baseUrl: string): boolean {
  return /\/v1\/*$/.test(baseUrl.trim());
}

/** Integers as the API wants them: a priority, a weight (spec doc 2 §5 "parsed to integers"). */
export const toInteger = (text: string, fallback = 0): number => {
  const n = Number.parseInt(text, 10);
  return Number.isFinite(n) ? n : fallback;
};

/**
 * The body of POST/PUT /api/channel/: trailing slashes stripped from the base URL, integers parsed, lists joined. On edit an empty key keeps the stored keys.
 */
export function channelPayload(values: ChannelFormValues, id?: number): Record<string, unknown> {
  // A type's default for an empty `other` (Spark's version) is the gateway's to apply.
  const other = values.other.trim();
  const body: Record<string, unknown> = {
    type: values.type,
    name: values.name.trim(),
    base_url: values.base_url.trim().replace(/\/+$/, ''),
    openai_organization: values.openai_organization.trim(),
    other,
    models: values.models.join(','),
    model_mapping: values.model_mapping.trim(),
    groups: values.groups,
    group: values.groups.join(','),
    priority: toInteger(values.priority),
    weight: toInteger(values.weight),
    tag: values.tag.trim(),
    auto_ban: values.auto_ban ? 1 : 0,
    test_model: values.test_model.trim(),
    status_code_mapping: values.status_code_mapping.trim(),
    param_override: values.param_override.trim(),
    header_override: values.header_override.trim(),
    setting: values.setting.trim(),
    remark: values.remark,
    max_input_tokens: Math.max(0, toInteger(values.max_input_tokens)),
  };
  if (id === undefined) {
    body.key = values.key.trim();
    return { mode: values.create_mode, multi_key_mode: values.multi_key_mode, channel: body };
  }
  body.id = id;
  if (values.key.trim() !== '') {
    body.key = values.key.trim();
    body.key_mode = values.key_mode;
  }
  body.multi_key_mode = values.multi_key_mode;
  return body;
}

/**
 * Adds custom model names (comma or newline separated) to the list. Answers the new list and whether
 * some were already there (spec doc 2 §5 "某些模型已存在！").
 */
export function addCustomModels(current: string[], typed: string): { models: string[]; duplicates: boolean } {
  const names = typed
    .split(/[,\n]/)
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const models = [...current];
  let duplicates = false;
  for (const name of names) {
    if (models.includes(name)) duplicates = true;
    else models.push(name);
  }
  return { models, duplicates };
}

/** Tag edit (spec doc 2 §5): what changed, or the first problem. */
export interface TagEditValues {
  tag: string;
  new_tag: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  param_override: string;
  header_override: string;
}

export function tagEditPayload(
  values: TagEditValues,
  original: { models: string[]; groups: string[] },
): { body?: Record<string, unknown>; problem?: string } {
  const body: Record<string, unknown> = { tag: values.tag };
  let changed = false;
  if (values.new_tag.trim() !== values.tag) {
    body.new_tag = values.new_tag.trim();
    changed = true;
  }
  if (values.model_mapping.trim() !== '') {
    if (!isJsonOrEmpty(values.model_mapping)) return { problem: 'channel.validation.model_mapping_json' };
    body.model_mapping = values.model_mapping.trim();
    changed = true;
  }
  for (const field of ['param_override', 'header_override'] as const) {
    if (values[field].trim() === '') continue;
    if (!isJsonOrEmpty(values[field])) return { problem: 'channel.validation.json_field' };
    body[field] = values[field].trim();
    changed = true;
  }
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((item, i) => item === b[i]);
  if (values.models.length > 0 && !same(values.models, original.models)) {
    body.models = values.models.join(',');
    changed = true;
  }
  if (values.groups.length > 0 && !same(values.groups, original.groups)) {
    body.groups = values.groups.join(',');
    changed = true;
  }
  return changed ? { body } : { problem: 'channel.validation.nothing_changed' };
}

/** Tag priority: any integer (spec doc 2 §5 "优先级必须是整数！"). */
export function checkTagPriority(text: string): number | undefined {
  return /^-?\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** Tag weight: a non-negative integer (spec doc 2 §5 "权重必须是非负整数！"). */
export function checkTagWeight(text: string): number | undefined {
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** The auto-disable reason and time kept in other_info (spec doc 2 §4). */
export function statusReason(channel: Pick<Channel, 'other_info'>): { reason?: string; time?: number } {
  try {
    const info = JSON.parse(channel.other_info || '{}') as { status_reason?: string; status_time?: number };
    return { reason: info.status_reason, time: info.status_time };
  } catch {
    return {};
  }
}

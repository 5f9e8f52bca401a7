import { compileGoRegExp } from '../overrides/go-regexp.ts';
import { type JsonPath, parsePath } from '../overrides/json-path.ts';

/**
 * Channel affinity rules (`channel_affinity_setting.rules`, reference §4.2): which requests are kept on
 * one channel, and by which key. Two spellings are accepted and may be mixed:
 * - Tollgate's short one: `path` (exact), `model_pattern` (`*` wildcards), `key_source` (one source);
 * - new-api's: `path_regex` / `model_regex` (lists of Go regular expressions), `key_sources` (objects
 *   `{type: "gjson", path, nested_path}` or `{type: "request_header", key, nested_path}`, or strings).
 * Key sources as strings: `body:<dotted path>`, `header:<name>`, `claude:cache_prefix` (a hash of a
 * Claude request up to its first `cache_control` block). Anything else is refused when saved.
 */

export type KeySource =
  | { readonly kind: 'body'; readonly path: JsonPath; readonly nested?: JsonPath | undefined; readonly label: string }
  | { readonly kind: 'header'; readonly name: string; readonly nested?: JsonPath | undefined; readonly label: string }
  | { readonly kind: 'claude_cache_prefix'; readonly label: string };

export interface AffinityRule {
  readonly name: string;
  readonly paths: readonly RegExp[];
  readonly models: readonly RegExp[];
  /** Case-insensitive substrings, one of which the User-Agent must contain; empty = any client. */
  readonly userAgentIncludes: readonly string[];
  readonly keySources: readonly KeySource[];
  readonly valuePattern?: RegExp | undefined;
  /** 0: the setting's default_ttl_seconds. */
  readonly ttlSeconds: number;
  readonly skipRetryOnFailure: boolean;
  readonly includeRuleName: boolean;
  readonly includeUsingGroup: boolean;
  readonly includeModelName: boolean;
}

const FIELDS = new Set([
  'name',
  'path',
  'path_regex',
  'model_pattern',
  'model_regex',
  'user_agent_include',
  'key_source',
  'key_sources',
  'value_regex',
  'ttl_seconds',
  'skip_retry_on_failure',
  'include_rule_name',
  'include_using_group',
  'include_model_name',
]);

/** A message in both languages the console speaks. */
export interface Bilingual {
  en: string;
  zh: string;
}

/** Fields new-api knows that Tollgate refuses, with the reason given to the administrator. */
const REFUSED: Record<string, Bilingual> = {
  param_override_template: {
    en: 'param_override_template is not supported: put the operations in the param_override of the channels',
    zh: '不支持 param_override_template：请把这些操作写进渠道的参数覆盖（param_override）',
  },
};

/** A rule set that cannot be used; the message (English, `zh` in Chinese) names the rule and the field. */
export class AffinityRuleError extends Error {
  override name = 'AffinityRuleError';
  readonly zh: string;
  constructor(where: Bilingual, en: string, zh: string) {
    super(where.en ? `${where.en}: ${en}` : en);
    this.zh = where.zh ? `${where.zh}：${zh}` : zh;
  }
}

const NOWHERE: Bilingual = { en: '', zh: '' };
const nth = (index: number): Bilingual => ({ en: `rule ${index + 1}`, zh: `第 ${index + 1} 条规则` });
const named = (name: string): Bilingual => ({ en: `rule "${name}"`, zh: `规则「${name}」` });

/** Parses and checks the rules as stored (JSON already parsed); throws AffinityRuleError. */
export function parseAffinityRules(value: unknown): AffinityRule[] {
  if (!Array.isArray(value))
    throw new AffinityRuleError(NOWHERE, 'the rules must be a JSON array', '规则必须是 JSON 数组');
  const names = new Set<string>();
  return value.map((raw, index) => {
    const rule = parseRule(raw, index);
    if (names.has(rule.name)) {
      throw new AffinityRuleError(nth(index), `the name "${rule.name}" is used twice`, `名称「${rule.name}」重复`);
    }
    names.add(rule.name);
    return rule;
  });
}

/** The first problem of a rule set, or undefined when it can be used (the option validator asks). */
export function affinityRulesProblem(value: unknown): Bilingual | undefined {
  try {
    parseAffinityRules(value);
    return undefined;
  } catch (error) {
    if (error instanceof AffinityRuleError) return { en: error.message, zh: error.zh };
    throw error;
  }
}

function parseRule(raw: unknown, index: number): AffinityRule {
  const where = nth(index);
  if (!isRecord(raw)) throw new AffinityRuleError(where, 'must be an object', '必须是对象');
  for (const field of Object.keys(raw)) {
    const refused = REFUSED[field];
    if (refused) throw new AffinityRuleError(where, refused.en, refused.zh);
    if (!FIELDS.has(field)) throw new AffinityRuleError(where, `unknown field "${field}"`, `未知字段「${field}」`);
  }
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (!name) throw new AffinityRuleError(where, '"name" must be a non-empty string', 'name 必须是非空字符串');
  if (name.includes(':')) {
    throw new AffinityRuleError(where, `the name "${name}" must not contain ":"`, `名称「${name}」不能包含 ":"`);
  }
  const at = named(name);
  const paths = [
    ...optionalString(raw, 'path', at).map((path) => new RegExp(`^${escapeRegExp(path)}$`)),
    ...stringList(raw, 'path_regex', at).map((pattern) => regex(pattern, at, 'path_regex')),
  ];
  const models = [
    ...optionalString(raw, 'model_pattern', at).map(globToRegExp),
    ...stringList(raw, 'model_regex', at).map((pattern) => regex(pattern, at, 'model_regex')),
  ];
  if (models.length === 0) {
    throw new AffinityRuleError(at, 'give model_pattern or model_regex', '需要 model_pattern 或 model_regex');
  }
  const keySources = [
    ...optionalString(raw, 'key_source', at).map((text) => keySourceOf(text, at)),
    ...listOf(raw, 'key_sources', at).map((source) => keySourceOf(source, at)),
  ];
  if (keySources.length === 0) {
    throw new AffinityRuleError(at, 'give key_source or key_sources', '需要 key_source 或 key_sources');
  }
  const valueRegex = optionalString(raw, 'value_regex', at)[0];
  const ttl = raw.ttl_seconds ?? 0;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
    throw new AffinityRuleError(
      at,
      'ttl_seconds must be a whole number of seconds, 0 for the default',
      'ttl_seconds 必须是非负整数秒，0 表示默认值',
    );
  }
  return {
    name,
    paths,
    models,
    userAgentIncludes: stringList(raw, 'user_agent_include', at)
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    keySources,
    valuePattern: valueRegex ? regex(valueRegex, at, 'value_regex') : undefined,
    ttlSeconds: ttl,
    skipRetryOnFailure: flag(raw, 'skip_retry_on_failure', false, at),
    // Keys of different rules and groups stay apart unless a rule says otherwise.
    includeRuleName: flag(raw, 'include_rule_name', true, at),
    includeUsingGroup: flag(raw, 'include_using_group', true, at),
    includeModelName: flag(raw, 'include_model_name', false, at),
  };
}

function keySourceOf(source: unknown, at: Bilingual): KeySource {
  if (typeof source === 'string') {
    const text = source.trim();
    if (text === 'claude:cache_prefix') return { kind: 'claude_cache_prefix', label: text };
    const colon = text.indexOf(':');
    const kind = colon > 0 ? text.slice(0, colon) : '';
    const rest = colon > 0 ? text.slice(colon + 1).trim() : '';
    if (kind === 'body' && rest) return { kind: 'body', path: parsePath(rest), label: text };
    if (kind === 'header' && rest) return { kind: 'header', name: rest.toLowerCase(), label: text };
    throw new AffinityRuleError(
      at,
      `key source "${text}" must be body:<path>, header:<name> or claude:cache_prefix`,
      `键来源「${text}」必须是 body:<路径>、header:<名称> 或 claude:cache_prefix`,
    );
  }
  if (!isRecord(source)) {
    throw new AffinityRuleError(at, 'a key source must be a string or an object', '键来源必须是字符串或对象');
  }
  const nestedText = typeof source.nested_path === 'string' ? source.nested_path.trim() : '';
  const nested = nestedText ? parsePath(nestedText) : undefined;
  const type = source.type;
  if (type === 'gjson' && typeof source.path === 'string' && source.path.trim()) {
    const path = source.path.trim();
    return { kind: 'body', path: parsePath(path), nested, label: `body:${path}` };
  }
  if (type === 'request_header' && typeof source.key === 'string' && source.key.trim()) {
    const name = source.key.trim();
    return { kind: 'header', name: name.toLowerCase(), nested, label: `header:${name}` };
  }
  throw new AffinityRuleError(
    at,
    `key source type "${String(type)}" is not supported (gjson with a path, request_header with a key)`,
    `不支持键来源类型「${String(type)}」（支持带 path 的 gjson、带 key 的 request_header）`,
  );
}

function optionalString(raw: Record<string, unknown>, field: string, at: Bilingual): string[] {
  const value = raw[field];
  if (value === undefined || value === '') return [];
  if (typeof value !== 'string') throw new AffinityRuleError(at, `${field} must be a string`, `${field} 必须是字符串`);
  return value.trim() ? [value.trim()] : [];
}

function listOf(raw: Record<string, unknown>, field: string, at: Bilingual): unknown[] {
  const value = raw[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AffinityRuleError(at, `${field} must be an array`, `${field} 必须是数组`);
  return value;
}

function stringList(raw: Record<string, unknown>, field: string, at: Bilingual): string[] {
  const list = listOf(raw, field, at);
  if (!list.every((item) => typeof item === 'string')) {
    throw new AffinityRuleError(at, `${field} must be an array of strings`, `${field} 必须是字符串数组`);
  }
  return (list as string[]).filter((item) => item.trim() !== '');
}

function flag(raw: Record<string, unknown>, field: string, fallback: boolean, at: Bilingual): boolean {
  const value = raw[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new AffinityRuleError(at, `${field} must be true or false`, `${field} 必须是 true 或 false`);
  }
  return value;
}

function regex(pattern: string, at: Bilingual, field: string): RegExp {
  try {
    return compileGoRegExp(pattern);
  } catch (error) {
    const reason = (error as Error).message;
    throw new AffinityRuleError(
      at,
      `${field}: invalid regular expression ${pattern} (${reason})`,
      `${field}：正则表达式 ${pattern} 无效（${reason}）`,
    );
  }
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map(escapeRegExp).join('.*')}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

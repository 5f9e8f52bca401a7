import { compileGoRegExp } from '../overrides/go-regexp.ts';
import { type JsonPath, parsePath } from '../overrides/json-path.ts';

/**
 * Channel affinity rules (`channel_affinity_setting.rules`, reference §4.2): which requests are kept on
 * one channel, and by which key. Two spellings are accepted and may be mixed:
 * - Tollgate's short one: `path` (exact), `model_pattern` (`*` wildcards), `key_source` (one source);
 * - new-api's: `path_regex` / `model_regex` (lists of Go regular expressions), `key_sources` (objects
 *   `{type: "gjson", path, nested_path}` or `{type: "request_header", key, nested_path}`, or strings).
 * Key sources as strings: `body:<dotted path>`, `header:<name>`, `claude:cache_prefix` (a hash of a
 * Claude request up to its last `cache_control` block). Anything else is refused when saved.
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

/** Fields new-api knows that Tollgate refuses, with the reason given to the administrator. */
const REFUSED: Record<string, string> = {
  param_override_template:
    'param_override_template is not supported: put the operations in the param_override of the channels',
};

/** A rule set that cannot be used; `message` names the rule and the field. */
export class AffinityRuleError extends Error {
  override name = 'AffinityRuleError';
}

/** Parses and checks the rules as stored (JSON already parsed); throws AffinityRuleError. */
export function parseAffinityRules(value: unknown): AffinityRule[] {
  if (!Array.isArray(value)) throw new AffinityRuleError('the rules must be a JSON array');
  const names = new Set<string>();
  return value.map((raw, index) => {
    const rule = parseRule(raw, index);
    if (names.has(rule.name)) throw new AffinityRuleError(`rule ${index + 1}: the name "${rule.name}" is used twice`);
    names.add(rule.name);
    return rule;
  });
}

/** The first problem of a rule set, or undefined when it can be used (the option validator asks). */
export function affinityRulesProblem(value: unknown): string | undefined {
  try {
    parseAffinityRules(value);
    return undefined;
  } catch (error) {
    if (error instanceof AffinityRuleError) return error.message;
    throw error;
  }
}

function parseRule(raw: unknown, index: number): AffinityRule {
  const where = `rule ${index + 1}`;
  if (!isRecord(raw)) throw new AffinityRuleError(`${where} must be an object`);
  for (const field of Object.keys(raw)) {
    const refused = REFUSED[field];
    if (refused) throw new AffinityRuleError(`${where}: ${refused}`);
    if (!FIELDS.has(field)) throw new AffinityRuleError(`${where}: unknown field "${field}"`);
  }
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (!name) throw new AffinityRuleError(`${where}: "name" must be a non-empty string`);
  if (name.includes(':')) throw new AffinityRuleError(`${where}: the name "${name}" must not contain ":"`);
  const at = `rule "${name}"`;
  const paths = [
    ...optionalString(raw, 'path', at).map((path) => new RegExp(`^${escapeRegExp(path)}$`)),
    ...stringList(raw, 'path_regex', at).map((pattern) => regex(pattern, `${at}: path_regex`)),
  ];
  const models = [
    ...optionalString(raw, 'model_pattern', at).map(globToRegExp),
    ...stringList(raw, 'model_regex', at).map((pattern) => regex(pattern, `${at}: model_regex`)),
  ];
  if (models.length === 0) throw new AffinityRuleError(`${at}: give model_pattern or model_regex`);
  const keySources = [
    ...optionalString(raw, 'key_source', at).map((text) => keySourceOf(text, at)),
    ...listOf(raw, 'key_sources', at).map((source) => keySourceOf(source, at)),
  ];
  if (keySources.length === 0) throw new AffinityRuleError(`${at}: give key_source or key_sources`);
  const valueRegex = optionalString(raw, 'value_regex', at)[0];
  const ttl = raw.ttl_seconds ?? 0;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
    throw new AffinityRuleError(`${at}: ttl_seconds must be a whole number of seconds, 0 for the default`);
  }
  return {
    name,
    paths,
    models,
    userAgentIncludes: stringList(raw, 'user_agent_include', at)
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    keySources,
    valuePattern: valueRegex ? regex(valueRegex, `${at}: value_regex`) : undefined,
    ttlSeconds: ttl,
    skipRetryOnFailure: flag(raw, 'skip_retry_on_failure', false, at),
    // Keys of different rules and groups stay apart unless a rule says otherwise.
    includeRuleName: flag(raw, 'include_rule_name', true, at),
    includeUsingGroup: flag(raw, 'include_using_group', true, at),
    includeModelName: flag(raw, 'include_model_name', false, at),
  };
}

function keySourceOf(source: unknown, at: string): KeySource {
  if (typeof source === 'string') {
    const text = source.trim();
    if (text === 'claude:cache_prefix') return { kind: 'claude_cache_prefix', label: text };
    const colon = text.indexOf(':');
    const kind = colon > 0 ? text.slice(0, colon) : '';
    const rest = colon > 0 ? text.slice(colon + 1).trim() : '';
    if (kind === 'body' && rest) return { kind: 'body', path: parsePath(rest), label: text };
    if (kind === 'header' && rest) return { kind: 'header', name: rest.toLowerCase(), label: text };
    throw new AffinityRuleError(
      `${at}: key source "${text}" must be body:<path>, header:<name> or claude:cache_prefix`,
    );
  }
  if (!isRecord(source)) throw new AffinityRuleError(`${at}: a key source must be a string or an object`);
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
    `${at}: key source type "${String(type)}" is not supported (gjson with a path, request_header with a key)`,
  );
}

function optionalString(raw: Record<string, unknown>, field: string, at: string): string[] {
  const value = raw[field];
  if (value === undefined || value === '') return [];
  if (typeof value !== 'string') throw new AffinityRuleError(`${at}: ${field} must be a string`);
  return value.trim() ? [value.trim()] : [];
}

function listOf(raw: Record<string, unknown>, field: string, at: string): unknown[] {
  const value = raw[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AffinityRuleError(`${at}: ${field} must be an array`);
  return value;
}

function stringList(raw: Record<string, unknown>, field: string, at: string): string[] {
  const list = listOf(raw, field, at);
  if (!list.every((item) => typeof item === 'string')) {
    throw new AffinityRuleError(`${at}: ${field} must be an array of strings`);
  }
  return (list as string[]).filter((item) => item.trim() !== '');
}

function flag(raw: Record<string, unknown>, field: string, fallback: boolean, at: string): boolean {
  const value = raw[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new AffinityRuleError(`${at}: ${field} must be true or false`);
  return value;
}

function regex(pattern: string, where: string): RegExp {
  try {
    return compileGoRegExp(pattern);
  } catch (error) {
    throw new AffinityRuleError(`${where}: invalid regular expression ${pattern} (${(error as Error).message})`);
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

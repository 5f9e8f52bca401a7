import { channelRuleError, RelayRuleError } from '../routing/errors.ts';
import { compileGoRegExp, goReplacement, replaceBounded } from './go-regexp.ts';
import {
  Draft,
  isObject,
  type JsonPath,
  type Location,
  locate,
  MISSING,
  parsePath,
  read,
  readAt,
} from './json-path.ts';

/**
 * A channel's param_override (reference §4.6), applied to the upstream request body after format
 * conversion. Two forms:
 *
 * - legacy: `{"temperature": 0.2, …}`, every top-level key set on the body;
 * - operations: `{"operations": [{mode, path, value, from, to, keep_origin, conditions, logic}]}`,
 *   applied in order (other top-level keys next to `operations` are merged first, as legacy).
 *
 * Modes: set, delete, move, copy, prepend, append, trim_prefix, trim_suffix, ensure_prefix,
 * ensure_suffix, trim_space, to_lower, to_upper, replace, regex_replace, prune_objects,
 * return_error, set_header, delete_header, copy_header, move_header, pass_headers, sync_fields
 * (all of new-api's; set_header takes a string value, not new-api's token-mapping object).
 *
 * Where new-api fails the whole request, this skips the operation instead: a path the body does
 * not have (move/copy/string ops/prepend/append on a missing field) and a condition comparing
 * values of different types (false, not an error). A value of the wrong type at a path that
 * exists, an unknown mode or a malformed setting is `channel:param_override_invalid`, which the
 * retry decision sends to another channel.
 *
 * Pure: no I/O, the input body is never modified (copy-on-write, see Draft), settings are
 * compiled once per channel snapshot.
 */

/** Header values as Node gives them: lower-case names. */
export type HeaderValues = Readonly<Record<string, string | string[] | undefined>>;

/** What conditions can test besides the body (new-api's BuildParamOverrideContext). */
export interface OverrideContext {
  /** The upstream model after mapping (new-api: falls back to the requested one). */
  model?: string | undefined;
  upstream_model?: string | undefined;
  /** The model the client asked for. */
  original_model?: string | undefined;
  request_path?: string | undefined;
  /** The client's request headers; conditions read them as `request_headers.<name>` or `headers.<name>`. */
  request_headers?: HeaderValues | undefined;
  retry_index?: number | undefined;
  is_retry?: boolean | undefined;
  is_channel_test?: boolean | undefined;
  last_error?: { status_code: number; message: string; code: string; type: string; skip_retry: boolean } | undefined;
  /** The channel's header_override: where header operations start from. */
  header_override?: Readonly<Record<string, unknown>> | undefined;
}

export type ParamOverrideResult =
  /**
   * `body` is the input itself when nothing changed, else a new document sharing untouched parts
   * with it: treat both as read-only. `headerOverride` is set when header operations ran: it then
   * replaces the channel's header_override for this attempt.
   */
  { ok: true; body: unknown; headerOverride?: Record<string, string> } | { ok: false; error: RelayRuleError };

export function applyParamOverride(
  body: unknown,
  override: Readonly<Record<string, unknown>> | undefined,
  context: OverrideContext,
): ParamOverrideResult {
  if (override === undefined) return { ok: true, body };
  const compiled = compiledOf(override);
  if (compiled.error) return { ok: false, error: compiled.error };
  const run = new Run(body, context);
  let current: Operation | undefined;
  try {
    if (compiled.legacy.length > 0) {
      if (!isObject(body)) throw new Invalid('the request body is not a JSON object');
      for (const [key, value] of compiled.legacy) run.draft.set([key], cloneValue(value));
    }
    for (const operation of compiled.operations) {
      current = operation;
      if (operation.when && !run.check(operation.when, run.draft.root)) continue;
      const returned = run.apply(operation);
      if (returned) return { ok: false, error: returned };
    }
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    const detail = current ? `${current.mode} ${current.label}: ${error.message}` : error.message;
    return { ok: false, error: channelRuleError('channel:param_override_invalid', { detail }) };
  }
  const headers = run.headers;
  return headers ? { ok: true, body: run.draft.root, headerOverride: headers } : { ok: true, body: run.draft.root };
}

// --- compiled settings ---

const CONDITION_MODES = ['full', 'prefix', 'suffix', 'contains', 'gt', 'gte', 'lt', 'lte'] as const;
type ConditionMode = (typeof CONDITION_MODES)[number];

interface Condition {
  path: JsonPath;
  mode: ConditionMode;
  value: unknown;
  /** `value` as the text prefix/suffix/contains compare with. */
  text: string;
  invert: boolean;
  passMissingKey: boolean;
}

interface Conditions {
  list: readonly Condition[];
  and: boolean;
}

interface ReturnedError {
  status: number;
  code: string;
  type: string;
  message: string;
  skipRetry: boolean;
}

interface SyncTarget {
  kind: 'json' | 'header';
  path: JsonPath;
  name: string;
}

interface Operation {
  mode: string;
  /** For error messages: the path or from→to. */
  label: string;
  path: JsonPath;
  from: string;
  to: string;
  fromPath: JsonPath;
  toPath: JsonPath;
  value: unknown;
  /** `value` as text, for the string modes and set_header. */
  text: string;
  keepOrigin: boolean;
  when: Conditions | undefined;
  regex?: RegExp;
  replacement?: string;
  returned?: ReturnedError;
  prune?: { conditions: Conditions; recursive: boolean };
  headerNames?: readonly string[];
  sync?: { from: SyncTarget; to: SyncTarget };
}

interface Compiled {
  legacy: ReadonlyArray<readonly [string, unknown]>;
  operations: readonly Operation[];
  error?: RelayRuleError;
}

/** A setting or an operation that cannot be carried out as configured. */
class Invalid extends Error {}

const compiledCache = new WeakMap<object, Compiled>();

function compiledOf(override: Readonly<Record<string, unknown>>): Compiled {
  let compiled = compiledCache.get(override);
  if (!compiled) {
    try {
      compiled = compile(override);
    } catch (error) {
      if (!(error instanceof Invalid)) throw error;
      compiled = {
        legacy: [],
        operations: [],
        error: channelRuleError('channel:param_override_invalid', { detail: error.message }),
      };
    }
    compiledCache.set(override, compiled);
  }
  return compiled;
}

const EMPTY_PATH = parsePath('');

function compile(override: Readonly<Record<string, unknown>>): Compiled {
  if (!Object.hasOwn(override, 'operations')) return { legacy: Object.entries(override), operations: [] };
  const list = override.operations;
  if (!Array.isArray(list)) throw new Invalid('"operations" must be an array');
  const legacy = Object.entries(override).filter(([key]) => key.trim().toLowerCase() !== 'operations');
  return { legacy, operations: list.map((raw, i) => compileOperation(raw, i)) };
}

function compileOperation(raw: unknown, position: number): Operation {
  if (!isObject(raw)) throw new Invalid(`operation #${position + 1} is not an object`);
  const mode = raw.mode;
  if (typeof mode !== 'string' || mode.trim() === '') throw new Invalid(`operation #${position + 1} has no mode`);
  const pathText = stringField(raw, 'path');
  const from = stringField(raw, 'from');
  const to = stringField(raw, 'to');
  const value = Object.hasOwn(raw, 'value') ? raw.value : null;
  const op: Operation = {
    mode,
    label: pathText || `${from} -> ${to}`,
    path: pathText === '' ? EMPTY_PATH : parsePath(pathText),
    from,
    to,
    fromPath: parsePath(from),
    toPath: parsePath(to),
    value,
    text: textOf(value),
    keepOrigin: raw.keep_origin === true,
    when: Object.hasOwn(raw, 'conditions') ? compileConditions(raw.conditions, raw.logic, 'OR') : undefined,
  };
  const need = (ok: boolean, what: string) => {
    if (!ok) throw new Invalid(`${mode} (operation #${position + 1}) needs ${what}`);
  };
  switch (mode) {
    case 'set':
    case 'delete':
    case 'prepend':
    case 'append':
    case 'trim_space':
    case 'to_lower':
    case 'to_upper':
      need(pathText !== '', 'a path');
      break;
    case 'trim_prefix':
    case 'trim_suffix':
      need(pathText !== '' && value !== null, 'a path and a value');
      break;
    case 'ensure_prefix':
    case 'ensure_suffix':
      need(pathText !== '' && op.text !== '', 'a path and a non-empty value');
      break;
    case 'move':
    case 'copy':
      need(from !== '' && to !== '', '"from" and "to"');
      break;
    case 'replace':
      need(pathText !== '' && from !== '', 'a path and a non-empty "from"');
      break;
    case 'regex_replace':
      need(pathText !== '' && from !== '', 'a path and a pattern in "from"');
      op.regex = regexOf(from, 'g');
      op.replacement = goReplacement(to);
      break;
    case 'prune_objects':
      op.prune = compilePrune(value);
      break;
    case 'return_error':
      op.returned = compileReturnedError(value);
      break;
    case 'set_header':
      need(pathText.trim() !== '', 'a header name in "path"');
      need(value !== null && !isObject(value) && !Array.isArray(value), 'a string value');
      break;
    case 'delete_header':
      need(pathText.trim() !== '', 'a header name in "path"');
      break;
    case 'copy_header':
    case 'move_header':
      need((from || pathText).trim() !== '' && (to || pathText).trim() !== '', 'header names in "from" and "to"');
      break;
    case 'pass_headers':
      op.headerNames = headerNamesOf(value);
      need(op.headerNames.length > 0, 'header names in "value"');
      break;
    case 'sync_fields':
      op.sync = { from: syncTargetOf(from), to: syncTargetOf(to) };
      break;
    default:
      throw new Invalid(`unknown mode "${mode}"`);
  }
  return op;
}

function stringField(raw: Record<string, unknown>, name: string): string {
  const value = raw[name];
  return typeof value === 'string' ? value : '';
}

/** `[{path, mode, value, invert, pass_missing_key}]`, or `{path: value}` meaning equality. */
function compileConditions(raw: unknown, logic: unknown, defaultLogic: 'AND' | 'OR'): Conditions | undefined {
  const and = (typeof logic === 'string' && logic.trim() !== '' ? logic.trim() : defaultLogic).toUpperCase() === 'AND';
  const list: Condition[] = [];
  if (isObject(raw)) {
    for (const [path, value] of Object.entries(raw)) {
      if (path.trim() !== '') list.push(condition(path.trim(), 'full', value, false, false));
    }
    if (list.length === 0) throw new Invalid('a conditions object needs at least one key');
  } else if (Array.isArray(raw)) {
    for (const item of raw) {
      if (!isObject(item)) throw new Invalid('a condition must be an object');
      const path = typeof item.path === 'string' ? item.path.trim() : '';
      const mode = typeof item.mode === 'string' ? item.mode.trim().toLowerCase() : '';
      if (path === '' || mode === '') throw new Invalid('a condition needs a path and a mode');
      if (!(CONDITION_MODES as readonly string[]).includes(mode)) throw new Invalid(`unknown condition mode "${mode}"`);
      const value = Object.hasOwn(item, 'value') ? item.value : null;
      list.push(condition(path, mode as ConditionMode, value, item.invert === true, item.pass_missing_key === true));
    }
  } else if (raw !== null && raw !== undefined) {
    throw new Invalid('conditions must be an array or an object');
  }
  return list.length > 0 ? { list, and } : undefined;
}

function condition(
  path: string,
  mode: ConditionMode,
  value: unknown,
  invert: boolean,
  passMissingKey: boolean,
): Condition {
  return { path: parsePath(path), mode, value, text: textOf(value), invert, passMissingKey };
}

function compilePrune(value: unknown): { conditions: Conditions; recursive: boolean } {
  if (typeof value === 'string' && value.trim() !== '') {
    return {
      conditions: { list: [condition('type', 'full', value.trim(), false, false)], and: true },
      recursive: true,
    };
  }
  if (!isObject(value)) throw new Invalid('prune_objects needs a type name or an options object');
  const list: Condition[] = [...(compileConditions(value.conditions, value.logic, 'AND')?.list ?? [])];
  if (value.where !== undefined) {
    if (!isObject(value.where)) throw new Invalid('prune_objects "where" must be an object');
    for (const [path, expected] of Object.entries(value.where)) {
      if (path.trim() !== '') list.push(condition(path.trim(), 'full', expected, false, false));
    }
  }
  if (value.type !== undefined) list.push(condition('type', 'full', value.type, false, false));
  if (list.length === 0) throw new Invalid('prune_objects needs conditions');
  const and =
    (typeof value.logic === 'string' && value.logic.trim() !== '' ? value.logic : 'AND').toUpperCase() === 'AND';
  return { conditions: { list, and: and }, recursive: value.recursive !== false };
}

/** new-api's defaults: 400, invalid_request, invalid_request_error, skip-retry. */
function compileReturnedError(value: unknown): ReturnedError {
  const result: ReturnedError = {
    status: 400,
    code: 'invalid_request',
    type: 'invalid_request_error',
    message: '',
    skipRetry: true,
  };
  if (typeof value === 'string') {
    result.message = value.trim();
  } else if (isObject(value)) {
    const message = typeof value.message === 'string' ? value.message : typeof value.msg === 'string' ? value.msg : '';
    result.message = message.trim();
    if (value.code !== undefined && value.code !== null && String(value.code).trim() !== '') {
      result.code = String(value.code).trim();
    }
    if (typeof value.type === 'string' && value.type.trim() !== '') result.type = value.type.trim();
    if (typeof value.skip_retry === 'boolean') result.skipRetry = value.skip_retry;
    const status = value.status_code ?? value.status;
    if (status !== undefined) {
      if (typeof status !== 'number' || !Number.isInteger(status))
        throw new Invalid('return_error status must be an integer');
      result.status = status;
    }
  } else {
    throw new Invalid('return_error needs a message or an object');
  }
  if (result.message === '') throw new Invalid('return_error needs a message');
  if (result.status < 100 || result.status > 511)
    throw new Invalid(`return_error status ${result.status} is out of range`);
  return result;
}

function headerNamesOf(value: unknown): string[] {
  let names: unknown[] = [];
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[') || text.startsWith('{')) {
      try {
        return headerNamesOf(JSON.parse(text));
      } catch {}
    }
    names = text.split(',');
  } else if (Array.isArray(value)) {
    names = value;
  } else if (isObject(value)) {
    for (const field of ['headers', 'names', 'header']) {
      const inner = value[field];
      if (inner !== undefined) names.push(...headerNamesOf(inner));
    }
  }
  const clean = names.map((n) => String(n).trim().toLowerCase()).filter((n) => n !== '');
  return [...new Set(clean)];
}

/** `json:<path>` / `body:<path>` / `header:<name>`; a bare text is a JSON path. */
function syncTargetOf(spec: string): SyncTarget {
  const text = spec.trim();
  if (text === '') throw new Invalid('sync_fields needs "from" and "to"');
  const colon = text.indexOf(':');
  if (colon < 0) return { kind: 'json', path: parsePath(text), name: '' };
  const kind = text.slice(0, colon).trim().toLowerCase();
  const key = text.slice(colon + 1).trim();
  if (key === '') throw new Invalid(`sync_fields target "${text}" has no key`);
  if (kind === 'json' || kind === 'body') return { kind: 'json', path: parsePath(key), name: '' };
  if (kind === 'header') return { kind: 'header', path: EMPTY_PATH, name: key.toLowerCase() };
  throw new Invalid(`sync_fields target "${text}" must start with json:, body: or header:`);
}

function regexOf(pattern: string, flags: string): RegExp {
  try {
    return compileGoRegExp(pattern, flags);
  } catch (error) {
    throw new Invalid(`invalid regular expression ${pattern}: ${(error as Error).message}`);
  }
}

// --- one application ---

class Run {
  readonly draft: Draft;
  readonly #context: OverrideContext;
  /** The working header override, created by the first header operation (or condition on it). */
  headers: Record<string, string> | undefined;

  constructor(body: unknown, context: OverrideContext) {
    this.draft = new Draft(body);
    this.#context = context;
  }

  /** Runs one operation; a return_error answers its error. */
  apply(op: Operation): RelayRuleError | undefined {
    const draft = this.draft;
    switch (op.mode) {
      case 'set':
        for (const location of locate(draft.root, op.path)) {
          if (op.keepOrigin && readAt(draft.root, location) !== MISSING) continue;
          if (!draft.set(location, cloneValue(op.value))) throw new Invalid('the path runs through an array by name');
        }
        break;
      case 'delete':
        for (const location of locate(draft.root, op.path)) draft.delete(location);
        break;
      case 'move':
      case 'copy': {
        const from = locate(draft.root, op.fromPath)[0];
        const value = from ? readAt(draft.root, from) : MISSING;
        const to = locate(draft.root, op.toPath)[0];
        if (from === undefined || value === MISSING || to === undefined || op.fromPath.text === op.toPath.text) break;
        if (!draft.set(to, op.mode === 'copy' ? cloneValue(value) : value)) {
          throw new Invalid('the target path runs through an array by name');
        }
        if (op.mode === 'move') draft.delete(from);
        break;
      }
      case 'prepend':
      case 'append':
        this.#each(op, (current) => join(current, op, op.mode === 'prepend'));
        break;
      case 'trim_prefix':
        this.#strings(op, (s) => (s.startsWith(op.text) ? s.slice(op.text.length) : s));
        break;
      case 'trim_suffix':
        this.#strings(op, (s) => (op.text !== '' && s.endsWith(op.text) ? s.slice(0, s.length - op.text.length) : s));
        break;
      case 'ensure_prefix':
        this.#strings(op, (s) => (s.startsWith(op.text) ? s : op.text + s));
        break;
      case 'ensure_suffix':
        this.#strings(op, (s) => (s.endsWith(op.text) ? s : s + op.text));
        break;
      case 'trim_space':
        this.#strings(op, (s) => s.trim());
        break;
      case 'to_lower':
        this.#strings(op, (s) => s.toLowerCase());
        break;
      case 'to_upper':
        this.#strings(op, (s) => s.toUpperCase());
        break;
      case 'replace':
        this.#strings(op, (s) => s.split(op.from).join(op.to));
        break;
      case 'regex_replace':
        this.#strings(op, (s) => replaceBounded(s, op.regex!, op.replacement!));
        break;
      case 'prune_objects':
        this.#prune(op);
        break;
      case 'return_error': {
        const r = op.returned!;
        const spec = { code: r.code, status: r.status, message: { zh: r.message, en: r.message } };
        return new RelayRuleError(spec, {}, r.type, r.skipRetry);
      }
      case 'set_header':
        this.#setHeader(op.path.text, op.text, op.keepOrigin);
        break;
      case 'delete_header':
        delete this.#headerMap()[op.path.text.trim().toLowerCase()];
        break;
      case 'copy_header':
      case 'move_header': {
        const from = (op.from || op.path.text).trim().toLowerCase();
        const to = (op.to || op.path.text).trim().toLowerCase();
        const value = this.#headerValue(from);
        if (value === undefined) break;
        this.#setHeader(to, value, op.keepOrigin);
        if (op.mode === 'move_header' && from !== to) delete this.#headerMap()[from];
        break;
      }
      case 'pass_headers':
        for (const name of op.headerNames!) {
          const value = this.#headerValue(name);
          if (value !== undefined) this.#setHeader(name, value, op.keepOrigin);
        }
        break;
      case 'sync_fields':
        this.#sync(op.sync!.from, op.sync!.to);
        break;
    }
    return undefined;
  }

  /** Whether the conditions hold; paths are read in `node` first, then in the context. */
  check(conditions: Conditions, node: unknown): boolean {
    for (const c of conditions.list) {
      const holds = this.#test(c, node);
      if (conditions.and ? !holds : holds) return holds;
    }
    return conditions.and;
  }

  #test(c: Condition, node: unknown): boolean {
    let value = read(node, c.path);
    if (value === MISSING) value = this.#contextValue(c.path);
    // A missing key is decided by pass_missing_key alone, before any invert (as new-api).
    if (value === MISSING) return c.passMissingKey;
    const result = compare(value, c);
    return c.invert ? !result : result;
  }

  #contextValue(path: JsonPath): unknown {
    const segments = path.segments;
    const first = segments[0]!.key;
    const context = this.#context;
    switch (first) {
      case 'headers':
      case 'request_headers': {
        if (segments.length !== 2) return MISSING;
        const value = headerText(context.request_headers?.[segments[1]!.key.toLowerCase()]);
        return value === '' ? MISSING : value;
      }
      case 'header_override': {
        if (segments.length !== 2) return MISSING;
        const value = this.#headerMap()[segments[1]!.key.toLowerCase()];
        return value === undefined ? MISSING : value;
      }
      case 'model':
        return segments.length === 1
          ? (context.model ?? context.upstream_model ?? context.original_model ?? MISSING)
          : MISSING;
      case 'is_retry':
        return segments.length === 1 ? (context.is_retry ?? (context.retry_index ?? 0) > 0) : MISSING;
      case 'retry':
        if (segments.length !== 2) return MISSING;
        if (segments[1]!.key === 'index') return context.retry_index ?? 0;
        if (segments[1]!.key === 'is_retry') return context.is_retry ?? (context.retry_index ?? 0) > 0;
        return MISSING;
      default:
        if (first.startsWith('last_error_') && segments.length === 1) {
          const field = first.slice('last_error_'.length);
          return context.last_error ? lastErrorField(context.last_error, field) : MISSING;
        }
        if (first === 'last_error' && segments.length === 2 && context.last_error) {
          return lastErrorField(context.last_error, segments[1]!.key);
        }
        return read(context, path);
    }
  }

  #each(op: Operation, change: (current: unknown) => unknown): void {
    for (const location of locate(this.draft.root, op.path)) {
      const current = readAt(this.draft.root, location);
      if (current === MISSING) continue;
      const next = change(current);
      if (next !== current) this.draft.set(location, next);
    }
  }

  #strings(op: Operation, change: (current: string) => string): void {
    this.#each(op, (current) => {
      if (typeof current !== 'string') throw new Invalid(`${op.path.text} is not a string`);
      return change(current);
    });
  }

  #prune(op: Operation): void {
    const { conditions, recursive } = op.prune!;
    const prune = (node: unknown, root: boolean): unknown => {
      if (Array.isArray(node)) {
        let kept: unknown[] | undefined;
        node.forEach((item, i) => {
          const next = prune(item, false);
          if (next !== item && !kept) kept = node.slice(0, i);
          if (kept && next !== DROP) kept.push(next);
        });
        return kept ? this.draft.adopt(kept) : node;
      }
      if (!isObject(node)) return node;
      if (!root && this.check(conditions, node)) return DROP;
      if (!recursive) return node;
      let copy: Record<string, unknown> | undefined;
      for (const [key, item] of Object.entries(node)) {
        const next = prune(item, false);
        if (next === item) continue;
        copy ??= this.draft.adopt({ ...node });
        if (next === DROP) delete copy[key];
        else copy[key] = next;
      }
      return copy ?? node;
    };
    const locations = op.path.text === '' ? [[] as Location] : locate(this.draft.root, op.path);
    for (const location of locations) {
      const target = readAt(this.draft.root, location);
      if (target === MISSING) continue;
      const next = prune(target, true);
      if (next !== target) this.draft.set(location, next);
    }
  }

  #sync(from: SyncTarget, to: SyncTarget): void {
    const source = this.#syncRead(from);
    const target = this.#syncRead(to);
    if (source !== MISSING && target === MISSING) this.#syncWrite(to, source);
    else if (target !== MISSING && source === MISSING) this.#syncWrite(from, target);
  }

  /** The value of a sync target; null and blank strings count as absent. */
  #syncRead(target: SyncTarget): unknown {
    if (target.kind === 'header') return this.#headerValue(target.name) ?? MISSING;
    const value = read(this.draft.root, target.path);
    if (value === null || (typeof value === 'string' && value.trim() === '')) return MISSING;
    return value;
  }

  #syncWrite(target: SyncTarget, value: unknown): void {
    if (target.kind === 'header') this.#setHeader(target.name, textOf(value), false);
    else {
      const location = locate(this.draft.root, target.path)[0];
      if (location) this.draft.set(location, cloneValue(value));
    }
  }

  #headerMap(): Record<string, string> {
    if (this.headers) return this.headers;
    const headers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(this.#context.header_override ?? {})) {
      const key = name.trim().toLowerCase();
      const value = textOf(raw).trim();
      // Pass-through rules (`*`, `re:…`) carry no value but must survive.
      if (key !== '' && (value !== '' || key === '*' || key.startsWith('re:') || key.startsWith('regex:'))) {
        headers[key] = value;
      }
    }
    this.headers = headers;
    return headers;
  }

  /** A header as the upstream would get it so far: the override first, then the client's. */
  #headerValue(name: string): string | undefined {
    const key = name.trim().toLowerCase();
    const overridden = this.#headerMap()[key];
    if (overridden !== undefined && overridden !== '') return overridden;
    const client = headerText(this.#context.request_headers?.[key]);
    return client === '' ? undefined : client;
  }

  #setHeader(name: string, value: string, keepOrigin: boolean): void {
    const headers = this.#headerMap();
    const key = name.trim().toLowerCase();
    if (keepOrigin && (headers[key] ?? '') !== '') return;
    const text = value.trim();
    if (text === '') delete headers[key];
    else headers[key] = text;
  }
}

const DROP = Symbol('drop');

function compare(value: unknown, c: Condition): boolean {
  switch (c.mode) {
    case 'full':
      return equal(value, c.value);
    case 'prefix':
      return textOf(value).startsWith(c.text);
    case 'suffix':
      return textOf(value).endsWith(c.text);
    case 'contains':
      return textOf(value).includes(c.text);
    default: {
      if (typeof value !== 'number' || typeof c.value !== 'number') return false;
      if (c.mode === 'gt') return value > c.value;
      if (c.mode === 'gte') return value >= c.value;
      if (c.mode === 'lt') return value < c.value;
      return value <= c.value;
    }
  }
}

/** new-api's equality: null only equals null; values of different JSON types are not equal. */
function equal(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b)) return false;
  if (typeof a === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** A value as text, as gjson's String() gives it: strings bare, null empty, containers as JSON. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function headerText(value: string | string[] | undefined): string {
  if (value === undefined) return '';
  return (typeof value === 'string' ? value : value.join(', ')).trim();
}

function lastErrorField(error: NonNullable<OverrideContext['last_error']>, field: string): unknown {
  switch (field) {
    case 'status_code':
      return error.status_code;
    case 'message':
      return error.message;
    case 'code':
    case 'error_code':
      return error.code;
    case 'type':
    case 'error_type':
      return error.type;
    case 'skip_retry':
      return error.skip_retry;
    default:
      return MISSING;
  }
}

/** prepend/append: arrays gain elements, strings text, objects keys (keep_origin keeps set ones). */
function join(current: unknown, op: Operation, before: boolean): unknown {
  if (Array.isArray(current)) {
    const added = cloneValue(op.value);
    const items = Array.isArray(added) ? added : [added];
    return before ? [...items, ...current] : [...current, ...items];
  }
  if (typeof current === 'string') return before ? op.text + current : current + op.text;
  if (isObject(current)) {
    if (!isObject(op.value)) throw new Invalid(`${op.path.text} is an object; the value must be one too`);
    const merged: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(op.value)) {
      if (!op.keepOrigin || merged[key] === undefined || merged[key] === null) merged[key] = cloneValue(value);
    }
    return merged;
  }
  throw new Invalid(`${op.path.text} is neither an array, a string nor an object`);
}

/** Values from the setting are copied into the body, so that nothing can later modify the setting. */
function cloneValue(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

import { AppError } from '../../errors.ts';
import { parseCidr } from '../../http/outbound/addresses.ts';
import { parsePortRange } from '../../http/outbound/ports.ts';
import { compileExpression, ExprError } from '../billing/expr/index.ts';
import { isTimeZone } from '../time-zones.ts';
import { findOptionDefinition, type OptionDefinition } from './definitions.ts';
import { optionErrors as E } from './errors.ts';
import { checkShape } from './shapes.ts';
import { formatStatusCodeRanges, parseStatusCodeRanges } from './status-code-ranges.ts';

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Checks a new value for an option and returns it as it is stored (numbers normalised, e.g.
 * "0.80" -> "0.8"; status code lists without spaces). Throws an AppError naming the problem.
 */
export function validateOption(key: string, value: string): string {
  const definition = findOptionDefinition(key);
  if (!definition) throw new AppError(E.OPTION_UNKNOWN, { key });
  switch (definition.type) {
    case 'boolean':
      return validateBoolean(definition, value);
    case 'integer':
    case 'number':
      return validateNumber(definition, value);
    case 'string':
      return validateString(definition, value);
    case 'json':
      return validateJson(definition, value);
  }
}

function validateBoolean({ key }: OptionDefinition, value: string): string {
  const trimmed = value.trim();
  if (trimmed !== 'true' && trimmed !== 'false') throw new AppError(E.OPTION_NOT_BOOLEAN, { key });
  return trimmed;
}

function validateNumber(definition: OptionDefinition, value: string): string {
  const { key, min, max, above } = definition;
  const trimmed = value.trim();
  const integer = definition.type === 'integer';
  if (integer && !INTEGER.test(trimmed)) throw new AppError(E.OPTION_NOT_INTEGER, { key });
  if (!integer && !DECIMAL.test(trimmed)) throw new AppError(E.OPTION_NOT_NUMBER, { key });
  const n = Number(trimmed);
  if (integer && !Number.isSafeInteger(n)) throw new AppError(E.OPTION_NOT_INTEGER, { key });
  if (!Number.isFinite(n)) throw new AppError(E.OPTION_NOT_NUMBER, { key });
  if (min !== undefined && n < min) throw new AppError(E.OPTION_TOO_SMALL, { key, min });
  if (above !== undefined && n <= above) throw new AppError(E.OPTION_NOT_ABOVE, { key, bound: above });
  if (max !== undefined && n > max) throw new AppError(E.OPTION_TOO_LARGE, { key, max });
  // String(-0) is "0", so "-0" cannot sneak past a `min: 0` check in its stored form either.
  return String(n);
}

function validateString(definition: OptionDefinition, value: string): string {
  const { key, choices, format } = definition;
  if (choices) {
    const trimmed = value.trim();
    if (!choices.includes(trimmed)) {
      throw new AppError(E.OPTION_INVALID_CHOICE, { key, choices: choices.map((c) => c || '""').join(', ') });
    }
    return trimmed;
  }
  if (format === 'url') return validateUrl(key, value);
  if (format === 'time-zone') {
    const zone = value.trim();
    if (!isTimeZone(zone)) throw new AppError(E.OPTION_INVALID_TIME_ZONE, { key, zone });
    return zone;
  }
  if (format === 'origins') return validateOrigins(key, value);
  if (format === 'domain') {
    const host = value.trim().toLowerCase();
    if (host !== '' && !DOMAIN.test(host)) throw new AppError(E.OPTION_INVALID_DOMAIN, { key });
    return host;
  }
  if (format === 'status-code-ranges') {
    const parsed = parseStatusCodeRanges(value);
    if (!parsed.ok) throw new AppError(E.OPTION_INVALID_STATUS_CODE_RANGES, { key, item: parsed.item });
    return formatStatusCodeRanges(parsed.ranges);
  }
  // Free text (HTML, Markdown, word lists) is stored exactly as given.
  return value;
}

/** Letters, digits and hyphens in dot-separated labels: what a relying party id may be. */
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Each entry an http(s) origin, stored in its canonical spelling (`new URL(...).origin`). */
function validateOrigins(key: string, value: string): string {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items
    .map((item) => {
      let parsed: URL | undefined;
      try {
        parsed = new URL(item);
      } catch {
        parsed = undefined;
      }
      const bare = parsed && parsed.pathname === '/' && !parsed.search && !parsed.hash && !item.endsWith('/');
      if (!parsed || !bare || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
        throw new AppError(E.OPTION_INVALID_ORIGIN, { key, item });
      }
      return parsed.origin;
    })
    .join(',');
}

function validateUrl(key: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') return '';
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw new AppError(E.OPTION_INVALID_URL, { key });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError(E.OPTION_INVALID_URL, { key });
  // "https://example.com/" and "https://example.com" are the same address; keep one spelling so
  // that callers can append paths without doubling the slash.
  const bare = parsed.pathname === '/' && !parsed.search && !parsed.hash;
  return bare && trimmed.endsWith('/') ? trimmed.slice(0, -1) : trimmed;
}

function validateJson(definition: OptionDefinition, value: string): string {
  const { key } = definition;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new AppError(E.OPTION_INVALID_JSON, { key });
  }
  if (definition.shape) {
    const mismatch = checkShape(parsed, definition.shape);
    if (mismatch) {
      throw new AppError(E.OPTION_INVALID_SHAPE, {
        key,
        path: mismatch.path,
        expectedZh: mismatch.expected.zh,
        expectedEn: mismatch.expected.en,
      });
    }
  }
  if (definition.entries) checkEntries(key, parsed as string[], definition.entries);
  if (definition.values === 'billing-expressions') checkExpressions(key, parsed as Record<string, string>);
  const problem = definition.check?.(parsed);
  if (problem !== undefined) {
    throw new AppError(E.OPTION_INVALID_RULES, { key, detailEn: problem.en, detailZh: problem.zh });
  }
  // Kept as written: admins edit these in a text area and expect their layout back.
  return value.trim();
}

const ENTRY_SYNTAX = {
  'ip-ranges': {
    valid: (entry: string) => parseCidr(entry) !== undefined,
    expectedZh: 'IP 地址或 CIDR 网段，例如 10.0.0.0/8',
    expectedEn: 'an IP address or a CIDR range such as 10.0.0.0/8',
  },
  'port-ranges': {
    valid: (entry: string) => parsePortRange(entry) !== undefined,
    expectedZh: '1 到 65535 的端口或端口范围，例如 443 或 8000-9000',
    expectedEn: 'a port or a port range from 1 to 65535, such as 443 or 8000-9000',
  },
};

/** A list entry that could never match would silently change what the list means: refused when saved. */
function checkEntries(key: string, list: string[], syntax: keyof typeof ENTRY_SYNTAX): void {
  const { valid, expectedZh, expectedEn } = ENTRY_SYNTAX[syntax];
  const item = list.find((entry) => entry.trim() !== '' && !valid(entry));
  if (item !== undefined) throw new AppError(E.OPTION_INVALID_ENTRY, { key, item, expectedZh, expectedEn });
}

/** Every billing expression must compile: a wrong one would otherwise fail on the first request it prices. */
function checkExpressions(key: string, expressions: Record<string, string>): void {
  for (const [model, source] of Object.entries(expressions)) {
    if (source.trim() === '') continue;
    try {
      compileExpression(source);
    } catch (error) {
      if (!(error instanceof ExprError)) throw error;
      throw new AppError(E.OPTION_INVALID_BILLING_EXPR, {
        key,
        model,
        position: error.position + 1,
        reasonZh: error.reason.zh,
        reasonEn: error.reason.en,
      });
    }
  }
}

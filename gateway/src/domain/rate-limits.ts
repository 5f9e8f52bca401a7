import { AppError, defineErrors } from '../errors.ts';

/**
 * Requests-per-minute and tokens-per-minute limits, as tokens, users and groups declare them:
 * `{ "*": { rpm, tpm }, "<model>": { rpm, tpm } }`. `*` applies to every model without an entry of its
 * own; a model's entry overrides `*` field by field. 0 or absent: no limit of that kind.
 */
export interface RateRule {
  rpm?: number;
  tpm?: number;
}

export type RateLimits = Record<string, RateRule>;

export const ANY_MODEL = '*';
const KINDS = ['rpm', 'tpm'] as const;
const MAX_RULES = 256;
const MAX_MODEL_NAME = 256;

export type RateLimitsCheck = { ok: true; limits: RateLimits } | { ok: false; message: { zh: string; en: string } };

/** The limits `value` declares, normalised (zero fields and empty entries dropped), or what is wrong with it. */
export function checkRateLimits(value: unknown, where = 'rate_limits'): RateLimitsCheck {
  const bad = (zh: string, en: string): RateLimitsCheck => ({ ok: false, message: { zh, en } });
  if (value === null || value === undefined || value === '') return { ok: true, limits: {} };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return bad(`${where} 必须是对象`, `${where} must be an object of model -> { rpm, tpm }`);
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_RULES)
    return bad(`${where} 最多 ${MAX_RULES} 项`, `${where} holds at most ${MAX_RULES} rules`);
  const limits: RateLimits = {};
  for (const [model, rule] of entries) {
    const at = `${where}[${JSON.stringify(model)}]`;
    if (model.trim() === '' || model.length > MAX_MODEL_NAME) {
      return bad(
        `${at}：模型名不能为空`,
        `${at}: the model name must be non-empty (at most ${MAX_MODEL_NAME} characters)`,
      );
    }
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
      return bad(`${at} 必须是 { rpm, tpm } 对象`, `${at} must be an object { rpm, tpm }`);
    }
    const kept: RateRule = {};
    for (const [field, amount] of Object.entries(rule)) {
      if (!(KINDS as readonly string[]).includes(field)) {
        return bad(`${at}：未知字段 ${field}（只能是 rpm 或 tpm）`, `${at}: unknown field ${field} (rpm or tpm only)`);
      }
      if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
        return bad(`${at}.${field} 必须是非负整数`, `${at}.${field} must be a whole number ≥ 0`);
      }
      if (amount > 0) kept[field as keyof RateRule] = amount;
    }
    if (kept.rpm !== undefined || kept.tpm !== undefined) limits[model.trim()] = kept;
  }
  return { ok: true, limits };
}

/** Limits as stored (JSON text written by checkRateLimits); anything unreadable is no limit. */
export function readRateLimits(text: string | null | undefined): RateLimits {
  if (!text) return {};
  try {
    const checked = checkRateLimits(JSON.parse(text));
    return checked.ok ? checked.limits : {};
  } catch {
    return {};
  }
}

/** The limit of one kind for a model: its own entry's, else `*`'s; `rule` names the entry it came from. */
export function limitFor(
  limits: RateLimits,
  model: string,
  kind: 'rpm' | 'tpm',
): { limit: number; rule: string } | undefined {
  const own = limits[model]?.[kind];
  if (own) return { limit: own, rule: model };
  const any = limits[ANY_MODEL]?.[kind];
  return any ? { limit: any, rule: ANY_MODEL } : undefined;
}

export const RATE_LIMIT_ERRORS = defineErrors({
  RATE_LIMITS_INVALID: {
    status: 400,
    message: { zh: '限速规则无效：{detailZh}', en: 'Invalid rate limits: {detail}' },
  },
});

/** The JSON text to store for limits a client sent; a clear error when they are not valid. */
export function rateLimitsToStore(value: unknown, where = 'rate_limits'): string {
  const checked = checkRateLimits(value, where);
  if (!checked.ok) {
    throw new AppError(RATE_LIMIT_ERRORS.RATE_LIMITS_INVALID, {
      detail: checked.message.en,
      detailZh: checked.message.zh,
    });
  }
  return JSON.stringify(checked.limits);
}

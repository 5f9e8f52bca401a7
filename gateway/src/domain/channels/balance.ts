import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { readChannelInfo, splitKeys } from './keys.ts';
import type { BalanceApi as BalanceApiName, ChannelType } from './registry.ts';
import { getUpstreamJson } from './upstream-models.ts';

/**
 * How each provider tells the balance of the account behind a key (new-api's "update balance",
 * reference §2.4). The registry names each type's balance API; a type with none answers
 * CHANNEL_BALANCE_UNSUPPORTED.
 */

type Currency = 'USD' | 'CNY';

interface Amount {
  value: number;
  currency: Currency;
}

/** GETs a JSON object at a path under the upstream's root; an answer of another shape is unreadable. */
type Ask = (path: string, expected: string) => Promise<Record<string, unknown>>;

/** Reads the account's balance, in one or several currencies. `host` is the upstream's host name. */
type BalanceApi = (ask: Ask, host: string) => Promise<Amount[]>;

const DAY_MS = 86_400_000;

/**
 * OpenAI's legacy dashboard endpoints, also served by one-api / new-api style gateways (Tollgate
 * included): the hard limit from `/v1/dashboard/billing/subscription`, minus the usage (in US cents)
 * from `/v1/dashboard/billing/usage` over the current month for accounts with a payment method, else
 * over the last 100 days (the longest window the endpoint takes).
 */
const openAiDashboard: BalanceApi = async (ask) => {
  const subscription = await ask('/v1/dashboard/billing/subscription', '{"hard_limit_usd":…}');
  const limit = amount(subscription.hard_limit_usd);
  if (limit === undefined) throw unreadable('{"hard_limit_usd":…}');
  const today = new Date();
  const end = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) + DAY_MS);
  const start =
    subscription.has_payment_method === true
      ? new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))
      : new Date(end.getTime() - 100 * DAY_MS);
  const usage = await ask(
    `/v1/dashboard/billing/usage?start_date=${isoDate(start)}&end_date=${isoDate(end)}`,
    '{"total_usage":…}',
  );
  const cents = amount(usage.total_usage);
  if (cents === undefined) throw unreadable('{"total_usage":…}');
  return [{ value: limit - cents / 100, currency: 'USD' }];
};

/** DeepSeek: `GET /user/balance`, one entry per currency (amounts are decimal strings). */
const deepSeek: BalanceApi = async (ask) => {
  const expected = '{"balance_infos":[{"currency":"USD"|"CNY","total_balance":…}]}';
  const body = await ask('/user/balance', expected);
  if (!Array.isArray(body.balance_infos)) throw unreadable(expected);
  return body.balance_infos.map((info) => {
    const entry = (info ?? {}) as Record<string, unknown>;
    const value = amount(entry.total_balance);
    const currency = entry.currency;
    if (value === undefined || (currency !== 'USD' && currency !== 'CNY')) throw unreadable(expected);
    return { value, currency };
  });
};

/** OpenRouter: `GET /api/v1/credits` (the type's base URL already ends in /api), credits are US dollars. */
const openRouter: BalanceApi = async (ask) => {
  const expected = '{"data":{"total_credits":…,"total_usage":…}}';
  const data = field(await ask('/v1/credits', expected), 'data');
  const credits = amount(data?.total_credits);
  const used = amount(data?.total_usage);
  if (credits === undefined || used === undefined) throw unreadable(expected);
  return [{ value: credits - used, currency: 'USD' }];
};

/** SiliconFlow: `GET /v1/user/info`; yuan on siliconflow.cn, US dollars on the international siliconflow.com. */
const siliconFlow: BalanceApi = async (ask, host) => {
  const expected = '{"data":{"totalBalance":…}}';
  const value = amount(field(await ask('/v1/user/info', expected), 'data')?.totalBalance);
  if (value === undefined) throw unreadable(expected);
  return [{ value, currency: onDomain(host, 'siliconflow.com') ? 'USD' : 'CNY' }];
};

/** Moonshot: `GET /v1/users/me/balance`; yuan on api.moonshot.cn, US dollars on api.moonshot.ai. */
const moonshot: BalanceApi = async (ask, host) => {
  const expected = '{"data":{"available_balance":…}}';
  const value = amount(field(await ask('/v1/users/me/balance', expected), 'data')?.available_balance);
  if (value === undefined) throw unreadable(expected);
  return [{ value, currency: onDomain(host, 'moonshot.ai') ? 'USD' : 'CNY' }];
};

/** The registry's balance API names (a type's `balance`) -> how to read them. */
const BALANCE_APIS: Record<BalanceApiName, BalanceApi> = {
  'openai-dashboard': openAiDashboard,
  openrouter: openRouter,
  moonshot,
  siliconflow: siliconFlow,
  deepseek: deepSeek,
};

export function balanceSupported(type: ChannelType): boolean {
  return type.offered && type.balance !== undefined;
}

export interface BalanceOptions {
  timeoutMs: number;
  /** Yuan per US dollar (option USDExchangeRate). */
  usdExchangeRate: number;
}

/** The balance, in US dollars, of the account behind `key` at the upstream `baseUrl`. */
export async function fetchUpstreamBalance(
  type: ChannelType,
  baseUrl: string,
  key: string,
  options: BalanceOptions,
): Promise<number> {
  const api = type.offered && type.balance ? BALANCE_APIS[type.balance] : undefined;
  if (!api) throw new AppError(CHANNEL_ERRORS.CHANNEL_BALANCE_UNSUPPORTED, { type: `${type.id} ${type.name}` });
  // Paths are given from the root; a base URL ending in /v1 (accepted with a warning) must not double it.
  const root = baseUrl.replace(/\/v1\/?$/i, '');
  const ask: Ask = async (path, expected) => {
    const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
    const answer = await getUpstreamJson(root + path, headers, key, options.timeoutMs);
    const body = answer?.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw unreadable(expected);
    return body as Record<string, unknown>;
  };
  const amounts = await api(ask, hostOf(root));
  let usd = 0;
  for (const { value, currency } of amounts) usd += currency === 'USD' ? value : value / options.usdExchangeRate;
  // Sums of decimal amounts carry binary noise (0.1 + 0.2); a millionth of a dollar is plenty.
  return Math.round(usd * 1e6) / 1e6;
}

/** The key to ask with: the first key not disabled in a multi-key channel (the first one if all are). */
export function balanceKey(keyText: string, channelInfoText: string): string {
  const keys = splitKeys(keyText);
  const disabled = readChannelInfo(channelInfoText).multi_key_status_list;
  const enabled = keys.find((_, index) => {
    const status = disabled[String(index)];
    return status === undefined || status === 1;
  });
  return enabled ?? keys[0] ?? '';
}

/** A finite number, given as a JSON number or a decimal string. */
function amount(value: unknown): number | undefined {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
  return Number.isFinite(parsed) ? parsed : undefined;
}

function field(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = body[name];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function unreadable(expected: string): AppError {
  return new AppError(CHANNEL_ERRORS.UPSTREAM_BALANCE_UNREADABLE, { expected });
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

const onDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

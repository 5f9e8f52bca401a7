import type { IncomingHttpHeaders } from 'node:http';
import { channelType } from '../../../domain/channels/index.ts';
import type { OptionsService } from '../../../domain/options/index.ts';
import type { Json } from '../../convert/types.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import type { ProviderContext, UpstreamRequest } from '../types.ts';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
/** The max_tokens used when claude.default_max_tokens names neither the model nor a default. */
const FALLBACK_MAX_TOKENS = 8192;
/** Claude's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;
const THINKING_SUFFIX = '-thinking';

const positive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/**
 * Finishes a Claude Messages body: the upstream model, max_tokens (which Claude requires) from
 * claude.default_max_tokens when the request has none, and the thinking adapter — a model named
 * `…-thinking` is the model without the suffix, with extended thinking on and a budget of
 * claude.thinking_adapter_budget_tokens_percentage of max_tokens.
 */
export function prepareClaudeBody(
  format: WireFormat,
  body: Json,
  context: ProviderContext,
): { body: Json; upstreamModel: string } {
  const next: Json = { ...body, model: context.upstreamModel };
  if (format !== 'claude-messages') return { body: next, upstreamModel: context.upstreamModel };
  const { options } = context;
  const requested = context.upstreamModel;
  const adapt =
    requested.endsWith(THINKING_SUFFIX) &&
    requested.length > THINKING_SUFFIX.length &&
    options.getBoolean('claude.thinking_adapter_enabled');
  const upstreamModel = adapt ? requested.slice(0, -THINKING_SUFFIX.length) : requested;
  next.model = upstreamModel;
  if (!positive(next.max_tokens)) next.max_tokens = defaultMaxTokens(options, [requested, upstreamModel]);

  if (adapt && !thinkingOn(next.thinking)) {
    const share = options.getNumber('claude.thinking_adapter_budget_tokens_percentage');
    next.thinking = { type: 'enabled', budget_tokens: Math.floor(next.max_tokens * share) };
    // Claude refuses sampling changes while thinking: temperature and top_k unset, top_p at least 0.95.
    if (next.temperature !== 1) delete next.temperature;
    delete next.top_k;
    if (typeof next.top_p === 'number' && next.top_p < 0.95) delete next.top_p;
  }
  fitThinkingBudget(next);
  return { body: next, upstreamModel };
}

function thinkingOn(thinking: unknown): boolean {
  const type = (thinking as Json | undefined)?.type;
  return type === 'enabled' || type === 'adaptive';
}

/** claude.default_max_tokens: the first model it names, else its "default", else 8192. */
function defaultMaxTokens(options: OptionsService, models: string[]): number {
  let table: Record<string, unknown> = {};
  try {
    const value = options.getJson<unknown>('claude.default_max_tokens');
    if (typeof value === 'object' && value !== null) table = value as Record<string, unknown>;
  } catch {
    // A broken option value falls back to the built-in default.
  }
  for (const model of models) {
    const tokens = table[model];
    if (positive(tokens)) return Math.floor(tokens);
  }
  return positive(table.default) ? Math.floor(table.default) : FALLBACK_MAX_TOKENS;
}

/**
 * Claude wants 1024 ≤ budget_tokens < max_tokens. A budget below the floor is raised to it; a
 * budget that would leave nothing for the answer gets max_tokens raised by the budget, so the
 * answer keeps the allowance the request asked for.
 */
function fitThinkingBudget(body: Json): void {
  const thinking = body.thinking as Json | undefined;
  if (thinking?.type !== 'enabled' || typeof thinking.budget_tokens !== 'number' || !positive(body.max_tokens)) return;
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(thinking.budget_tokens));
  if (budget !== thinking.budget_tokens) body.thinking = { ...thinking, budget_tokens: budget };
  if (budget >= body.max_tokens) body.max_tokens += budget;
}

/** A client header's value, repeated headers joined as HTTP joins them. */
function headerValue(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text?.trim() ? text.trim() : undefined;
}

/** Headers claude.model_headers_settings may not touch: the credentials and the body's framing. */
const PROTECTED = new Set(['x-api-key', 'authorization', 'content-type', 'content-length', 'host']);

/** Adds values to a comma-separated header, each once. */
function mergeHeader(headers: Record<string, string>, name: string, values: string[]): void {
  const merged = (headers[name] ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  for (const value of values) {
    const trimmed = value.trim();
    if (trimmed !== '' && !merged.includes(trimmed)) merged.push(trimmed);
  }
  if (merged.length > 0) headers[name] = merged.join(',');
}

/** `POST {base}/v1/messages` with Anthropic's key header, API version and beta flags. */
export function buildClaudeRequest(input: {
  format: WireFormat;
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  body: string | Uint8Array | FormData;
  options: OptionsService;
  clientHeaders: IncomingHttpHeaders;
}): UpstreamRequest {
  const { format, channel, key, upstreamModel, body, options, clientHeaders } = input;
  if (format !== 'claude-messages') throw new Error(`the Anthropic protocol has no operation for ${format}`);
  const base = (channel.baseUrl || channelType(channel.type)?.baseUrl || ANTHROPIC_BASE_URL).replace(/\/+$/, '');
  const url = base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-api-key': key,
    'anthropic-version': headerValue(clientHeaders['anthropic-version']) ?? DEFAULT_ANTHROPIC_VERSION,
  };
  const beta = headerValue(clientHeaders['anthropic-beta']);
  if (beta) mergeHeader(headers, 'anthropic-beta', beta.split(','));

  let settings: unknown;
  try {
    settings = options.getJson<Record<string, unknown>>('claude.model_headers_settings')?.[upstreamModel];
  } catch {
    settings = undefined;
  }
  if (typeof settings === 'object' && settings !== null) {
    for (const [name, values] of Object.entries(settings)) {
      const header = name.toLowerCase();
      if (PROTECTED.has(header)) continue;
      const list = (Array.isArray(values) ? values : [values]).filter((v): v is string => typeof v === 'string');
      if (list.length === 0) continue;
      // anthropic-beta is a list the client's flags join; any other header takes the setting's value.
      if (header === 'anthropic-beta')
        mergeHeader(
          headers,
          header,
          list.flatMap((value) => value.split(',')),
        );
      else headers[header] = list.join(',');
    }
  }
  return { url, method: 'POST', headers, body };
}

/** `POST {base}/v1/messages/count_tokens`: the same credentials, version and beta flags as a message. */
export function buildClaudeCountTokensRequest(input: {
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  body: string;
  options: OptionsService;
  clientHeaders: IncomingHttpHeaders;
}): UpstreamRequest {
  const request = buildClaudeRequest({ ...input, format: 'claude-messages' });
  return { ...request, url: `${request.url}/count_tokens` };
}

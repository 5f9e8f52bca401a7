import type { ModelPrice, Usage, WireFormat } from '../../relay/types.ts';
import type { ToolSurcharges } from '../billing/quota.ts';
import type { TieredTrace } from '../billing/tiered.ts';

/**
 * The `other` JSON of usage logs, with new-api's key names (spec doc 3 §3, reference §5.7): the
 * console's log detail reads these keys, so they are part of the API.
 */

/** How a streamed response ended (`stream_status`, administrators only). */
export interface StreamOutcome {
  /** Why it ended: 'done', 'eof', 'client_gone', 'idle_timeout', 'upstream_error', … */
  endReason: string;
  /** True when it ended the way its protocol ends a stream ([DONE], message_stop, …). */
  normal: boolean;
  endError?: string;
  /** Error events seen in the stream. */
  errors?: string[];
}

/** Paid tool calls and separately priced inputs, as billed (reference §5.4). */
export interface Surcharges extends ToolSurcharges {
  /** Audio input priced on its own (Gemini): tokens and USD per 1M tokens. */
  audioInput?: { tokens: number; priceUsdPer1M: number };
  /** Responses API image_generation_call: USD per call. */
  imageGenerationCall?: { priceUsd: number };
}

export interface ConsumeOtherInput {
  /** The price the bill was computed with. */
  price: ModelPrice;
  /** The usage billed. */
  usage: Usage;
  /** Milliseconds from the request's start to the first byte of the response (frt). */
  firstResponseMs: number;
  requestedModel: string;
  /** The model sent upstream after mapping; differs from requestedModel when mapped. */
  upstreamModel: string;
  /** Channel ids tried, in order, the serving one last (admin_info.use_channel). */
  usedChannels: readonly number[];
  /** The key used on a multi-key channel. */
  multiKeyIndex?: number;
  requestPath?: string;
  /** Wire formats the request went through, the client's first; give it only when a conversion happened. */
  formatChain?: readonly WireFormat[];
  /** The format the upstream was spoken to in (`claude` when Claude Messages). */
  upstreamFormat?: WireFormat;
  /** Usage with Claude semantics (input excludes cache): `usage_semantic: "anthropic"`. */
  claudeUsage?: boolean;
  reasoningEffort?: string;
  systemPromptOverwritten?: boolean;
  /** 'audio' for audio models, 'realtime' for the realtime websocket: adds the audio/text split (also added
   * whenever the usage has audio tokens). */
  mode?: 'text' | 'audio' | 'realtime';
  /** The ratio 1-hour cache writes were billed at; default the write ratio × 1.6 (reference §5.2). */
  cacheCreation1hRatio?: number;
  surcharges?: Surcharges;
  billingSource?: 'wallet' | 'subscription';
  billingPreference?: string;
  /** Audit of param_override operations applied (`po`). */
  paramOverrideAudit?: readonly unknown[];
  /** For streamed requests only. */
  stream?: StreamOutcome;
  rejectReason?: string;
  /** The group the request was routed in, when it differs from the token's (auto group). */
  group?: string;
  /** Which channel affinity rule and key steered the request (admin_info.channel_affinity). */
  channelAffinity?: Readonly<Record<string, unknown>>;
  /** Why the channel was chosen (admin_info.route, relay/routing/route-trace.ts). */
  route?: Readonly<Record<string, unknown>>;
  /** Expression (`tiered_expr`) billing: the expression, its tier and cost. */
  tiered?: TieredTrace;
  /** Further keys, written last. */
  extra?: Readonly<Record<string, unknown>>;
}

/** The keys a consume log's `other` may hold. */
export interface ConsumeOther {
  model_ratio: number;
  group_ratio: number;
  completion_ratio: number;
  cache_tokens: number;
  cache_ratio: number;
  /** USD per call; -1 in ratio (per token) mode. */
  model_price: number;
  /** GroupGroupRatio when it applied, else -1. */
  user_group_ratio: number;
  frt: number;
  reasoning_effort?: string;
  is_model_mapped?: true;
  upstream_model_name?: string;
  is_system_prompt_overwritten?: true;
  admin_info: {
    use_channel: string[];
    is_multi_key?: true;
    multi_key_index?: number;
    local_count_tokens?: true;
    channel_affinity?: Readonly<Record<string, unknown>>;
    route?: Readonly<Record<string, unknown>>;
  };
  request_path?: string;
  request_conversion?: string[];
  claude?: true;
  usage_semantic?: 'anthropic';
  /** Claude semantics: every input token, cache included. */
  input_tokens_total?: number;
  billing_source?: string;
  billing_preference?: string;
  po?: unknown[];
  stream_status?: {
    status: 'ok' | 'error';
    end_reason: string;
    end_error?: string;
    error_count?: number;
    errors?: string[];
  };
  reject_reason?: string;
  group?: string;
  cache_creation_tokens?: number;
  cache_creation_ratio?: number;
  cache_creation_tokens_5m?: number;
  cache_creation_ratio_5m?: number;
  cache_creation_tokens_1h?: number;
  cache_creation_ratio_1h?: number;
  image?: true;
  image_ratio?: number;
  image_output?: number;
  web_search?: true;
  web_search_call_count?: number;
  web_search_price?: number;
  file_search?: true;
  file_search_call_count?: number;
  file_search_price?: number;
  audio_input_seperate_price?: true;
  audio_input_token_count?: number;
  audio_input_price?: number;
  image_generation_call?: true;
  image_generation_call_price?: number;
  audio?: true;
  ws?: true;
  audio_input?: number;
  audio_output?: number;
  text_input?: number;
  text_output?: number;
  audio_ratio?: number;
  audio_completion_ratio?: number;
  billing_mode?: 'tiered_expr';
  /** The billing expression, base64 (new-api's key). */
  expr_b64?: string;
  /** The tier() that applied to the real usage. */
  matched_tier?: string;
  /** The expression's cost in USD before the group ratio (Tollgate's). */
  expr_cost_usd?: number;
  /** Set when the real usage could not be priced and the reservation's estimate was billed (Tollgate's). */
  expr_estimate_billed?: true;
  /** The expression's request multipliers and whether each applied (new-api's key). */
  request_rules?: Array<{ cond: string; multiplier: number; matched: boolean }>;
  [extra: string]: unknown;
}

/** new-api's display names of the formats in `request_conversion`. */
function formatName(format: WireFormat): string {
  if (format === 'openai-responses' || format === 'openai-responses-compact') return 'OpenAI Responses';
  if (format.startsWith('openai-')) return 'OpenAI Compatible';
  if (format === 'claude-messages') return 'Claude Messages';
  if (format.startsWith('gemini-')) return 'Google Gemini';
  return format;
}

/** The `other` object of a consume log (type 2). */
export function buildConsumeOther(input: ConsumeOtherInput): ConsumeOther {
  const { price, usage } = input;
  const claude = input.upstreamFormat === 'claude-messages' || input.claudeUsage === true;
  const other: ConsumeOther = {
    model_ratio: price.modelRatio,
    group_ratio: price.groupRatio,
    completion_ratio: price.completionRatio,
    cache_tokens: usage.cachedTokens ?? 0,
    cache_ratio: price.cacheRatio,
    model_price: price.perCallUsd ?? -1,
    user_group_ratio: price.userGroupRatio ?? -1,
    frt: input.firstResponseMs,
    admin_info: { use_channel: input.usedChannels.map(String) },
  };
  if (input.reasoningEffort) other.reasoning_effort = input.reasoningEffort;
  if (input.upstreamModel && input.upstreamModel !== input.requestedModel) {
    other.is_model_mapped = true;
    other.upstream_model_name = input.upstreamModel;
  }
  if (input.systemPromptOverwritten) other.is_system_prompt_overwritten = true;
  if (input.multiKeyIndex !== undefined) {
    other.admin_info.is_multi_key = true;
    other.admin_info.multi_key_index = input.multiKeyIndex;
  }
  if (usage.estimated) other.admin_info.local_count_tokens = true;
  if (input.channelAffinity) other.admin_info.channel_affinity = input.channelAffinity;
  if (input.route) other.admin_info.route = input.route;
  if (input.requestPath) other.request_path = input.requestPath;
  if (input.formatChain && input.formatChain.length > 0) other.request_conversion = input.formatChain.map(formatName);
  if (input.upstreamFormat === 'claude-messages') other.claude = true;
  if (input.claudeUsage) {
    other.claude = true;
    other.usage_semantic = 'anthropic';
    other.input_tokens_total = usage.promptTokens;
  }
  if (input.billingSource) other.billing_source = input.billingSource;
  if (input.billingPreference) other.billing_preference = input.billingPreference;
  if (input.paramOverrideAudit && input.paramOverrideAudit.length > 0) other.po = [...input.paramOverrideAudit];
  if (input.stream) other.stream_status = streamStatus(input.stream);
  if (input.rejectReason) other.reject_reason = input.rejectReason;
  if (input.group) other.group = input.group;
  addCacheCreation(other, input, claude);
  addMedia(other, input);
  addSurcharges(other, input.surcharges);
  if (input.tiered) addTiered(other, input.tiered);
  if (input.extra) Object.assign(other, input.extra);
  return other;
}

function addTiered(other: ConsumeOther, tiered: TieredTrace): void {
  other.billing_mode = 'tiered_expr';
  other.expr_b64 = Buffer.from(tiered.expression, 'utf8').toString('base64');
  other.matched_tier = tiered.tier;
  other.expr_cost_usd = tiered.costUsd;
  if (tiered.fellBackToEstimate) other.expr_estimate_billed = true;
  if (tiered.requestRules.length > 0) other.request_rules = tiered.requestRules;
}

function streamStatus(s: StreamOutcome): NonNullable<ConsumeOther['stream_status']> {
  const errors = s.errors ?? [];
  const status: NonNullable<ConsumeOther['stream_status']> = {
    status: s.normal && errors.length === 0 ? 'ok' : 'error',
    end_reason: s.endReason,
  };
  if (s.endError) status.end_error = s.endError;
  if (errors.length > 0) {
    status.error_count = errors.length;
    status.errors = [...errors];
  }
  return status;
}

/** Claude always shows its cache-write fields; other formats only when something was written. */
function addCacheCreation(other: ConsumeOther, input: ConsumeOtherInput, claude: boolean): void {
  const written = input.usage.cacheCreationTokens ?? 0;
  if (written === 0 && !claude) return;
  const ratio = input.price.cacheCreationRatio;
  other.cache_creation_tokens = written;
  other.cache_creation_ratio = ratio;
  const hour = Math.min(input.usage.cacheCreation1hTokens ?? 0, written);
  if (hour === 0) return;
  if (written - hour > 0) {
    other.cache_creation_tokens_5m = written - hour;
    other.cache_creation_ratio_5m = ratio;
  }
  other.cache_creation_tokens_1h = hour;
  other.cache_creation_ratio_1h = input.cacheCreation1hRatio ?? ratio * 1.6;
}

function addMedia(other: ConsumeOther, input: ConsumeOtherInput): void {
  const { usage, price } = input;
  // new-api names the image *input* tokens image_output; kept for the console.
  if (usage.imageInputTokens) {
    other.image = true;
    other.image_ratio = price.imageRatio;
    other.image_output = usage.imageInputTokens;
  }
  const audioTokens = (usage.audioInputTokens ?? 0) + (usage.audioOutputTokens ?? 0);
  if (input.mode === 'audio' || input.mode === 'realtime' || audioTokens > 0) {
    if (input.mode === 'realtime') other.ws = true;
    else other.audio = true;
    const audioIn = usage.audioInputTokens ?? 0;
    const audioOut = usage.audioOutputTokens ?? 0;
    other.audio_input = audioIn;
    other.audio_output = audioOut;
    other.text_input = Math.max(0, usage.promptTokens - audioIn);
    other.text_output = Math.max(0, usage.completionTokens - audioOut);
    other.audio_ratio = price.audioRatio;
    other.audio_completion_ratio = price.audioCompletionRatio;
  }
}

function addSurcharges(other: ConsumeOther, s: Surcharges | undefined): void {
  if (!s) return;
  if (s.webSearch && s.webSearch.calls > 0) {
    other.web_search = true;
    other.web_search_call_count = s.webSearch.calls;
    other.web_search_price = s.webSearch.priceUsdPer1k;
  }
  if (s.fileSearch && s.fileSearch.calls > 0) {
    other.file_search = true;
    other.file_search_call_count = s.fileSearch.calls;
    other.file_search_price = s.fileSearch.priceUsdPer1k;
  }
  if (s.audioInput && s.audioInput.tokens > 0 && s.audioInput.priceUsdPer1M > 0) {
    // Spelled as new-api spells it.
    other.audio_input_seperate_price = true;
    other.audio_input_token_count = s.audioInput.tokens;
    other.audio_input_price = s.audioInput.priceUsdPer1M;
  }
  if (s.imageGenerationCall && s.imageGenerationCall.priceUsd > 0) {
    other.image_generation_call = true;
    other.image_generation_call_price = s.imageGenerationCall.priceUsd;
  }
}

export interface ErrorOtherInput {
  requestPath?: string;
  /** The error's `type` and `code` as returned to the client, and its HTTP status. */
  errorType: string;
  errorCode: string;
  statusCode: number;
  channelId: number;
  channelName: string;
  channelType: number;
  usedChannels: readonly number[];
  multiKeyIndex?: number;
  /** Why the last channel was chosen (admin_info.route). */
  route?: Readonly<Record<string, unknown>>;
}

export type ErrorOther = {
  request_path?: string;
  error_type: string;
  error_code: string;
  status_code: number;
  channel_id: number;
  channel_name: string;
  channel_type: number;
  admin_info: {
    use_channel: string[];
    is_multi_key?: true;
    multi_key_index?: number;
    route?: Readonly<Record<string, unknown>>;
  };
};

/** The `other` object of an error log (type 5), as new-api writes it. */
export function buildErrorOther(input: ErrorOtherInput): ErrorOther {
  const other: ErrorOther = {
    error_type: input.errorType,
    error_code: input.errorCode,
    status_code: input.statusCode,
    channel_id: input.channelId,
    channel_name: input.channelName,
    channel_type: input.channelType,
    admin_info: { use_channel: input.usedChannels.map(String) },
  };
  if (input.requestPath) other.request_path = input.requestPath;
  if (input.multiKeyIndex !== undefined) {
    other.admin_info.is_multi_key = true;
    other.admin_info.multi_key_index = input.multiKeyIndex;
  }
  if (input.route) other.admin_info.route = input.route;
  return other;
}

/**
 * The model name a log and its hourly bucket carry: GPTs (`gpt-4-gizmo-g-…`) collapse to one name, as
 * in new-api, so that thousands of GPTs do not make thousands of dashboard rows. The relay adds the
 * full name to the log's content.
 */
export function logModelName(model: string): string {
  if (model.startsWith('gpt-4-gizmo')) return 'gpt-4-gizmo-*';
  if (model.startsWith('gpt-4o-gizmo')) return 'gpt-4o-gizmo-*';
  return model;
}

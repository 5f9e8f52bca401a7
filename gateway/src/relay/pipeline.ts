import type { IncomingHttpHeaders } from 'node:http';
import {
  compactionPriceModel,
  type ExprRequest,
  estimateCompletionTokens,
  isFreePrice,
  preConsumeQuota,
  resolvePrice,
  settleQuota,
} from '../domain/billing/index.ts';
import type { QuotaLedger, Reservation } from '../domain/ledger/ledger.ts';
import type { OptionsService } from '../domain/options/index.ts';
import type { PricingService } from '../domain/pricing/service.ts';
import { buildConsumeOther, type UsageRecorder } from '../domain/usage/index.ts';
import { AppError } from '../errors.ts';
import type { ChannelAffinity } from './affinity/channel-affinity.ts';
import { RequestAffinity } from './affinity/request-affinity.ts';
import { assertModelAllowed, type RelayCaller } from './auth/key-auth.ts';
import { type RequestCharge, requestCharge } from './charge.ts';
import { clientType } from './client-type.ts';
import { conversionChain } from './convert/index.ts';
import { recordRelayFailure } from './error-log.ts';
import { RELAY_ERRORS } from './errors.ts';
import { Exchange, type ExchangeOutcome } from './exchange/exchange.ts';
import { StreamBroken, UpstreamFailure } from './exchange/failure.ts';
import { prepareUpstream, upstreamTarget } from './exchange/prepare.ts';
import type { ClientSink } from './exchange/sink.ts';
import type { StreamDrain } from './exchange/stream-drain.ts';
import { ENDING_ERROR_TYPES } from './exchange/stream-ending.ts';
import type { ChannelHealth } from './health/channel-health.ts';
import { circuitVerdict, forcedThroughCircuit, passCircuit } from './health/circuit-gate.ts';
import type { Circuits } from './health/circuits.ts';
import { imagesToBill } from './images-listed.ts';
import type { ModelRequestLimit } from './limits.ts';
import type { RelayMetrics } from './metrics.ts';
import { isTimeout, type RelayNotes } from './outcome.ts';
import {
  type CompletionBudget,
  completionBudget,
  deliveredUsage,
  type StreamBudget,
  streamGuardFor,
} from './overrun/index.ts';
import type { QuotaAlerts } from './quota-alerts.ts';
import type { RateLimiter } from './rate-limits.ts';
import { routeGroups } from './routing/auto-group.ts';
import { RelayRuleError } from './routing/errors.ts';
import type { RoutingIndex } from './routing/index-cache.ts';
import { retryStatusRanges, shouldRetry } from './routing/retry.ts';
import { type Pick, type PickReason, RoutePlan } from './routing/route-plan.ts';
import { type RouteTrace, routeHeaderValue, routeTrace, wantsRouteHeader } from './routing/route-trace.ts';
import { scrubFailure } from './secrets/failure.ts';
import type { SecretScrubber } from './secrets/scrubber.ts';
import { scrubbingSink } from './secrets/sink.ts';
import type { SensitiveWords } from './sensitive/screen.ts';
import type { Transport } from './transport.ts';
import type { ChannelSnapshot, ModelPrice, Usage, WireFormat } from './types.ts';

export interface PipelineDeps {
  options: OptionsService;
  pricing: PricingService;
  routing: RoutingIndex;
  ledger: QuotaLedger;
  recorder: UsageRecorder;
  limits: ModelRequestLimit;
  rateLimits: RateLimiter;
  transport: Transport;
  metrics: RelayMetrics;
  alerts: QuotaAlerts;
  health: ChannelHealth;
  circuits: Circuits;
  affinity: ChannelAffinity;
  sensitive: SensitiveWords;
  /** Takes secrets out of upstream text before a client or a user-readable log sees it. */
  secrets: SecretScrubber;
  /** Ends this pod's open streams when its drain timeout runs out (absent: never). */
  streamDrain?: StreamDrain;
}

/** A parsed client request, ready to route. */
export interface RelayRequest {
  format: WireFormat;
  /** The model the client asked for: routing, limits, billing and logs use it. */
  model: string;
  /** JSON body (an object), or multipart fields and files. */
  body: Record<string, unknown> | FormData;
  /** The JSON body's bytes as the client sent them (decoded): what pass-through mode forwards. */
  rawBody?: Uint8Array | undefined;
  stream: boolean;
  /** The client asked for the usage chunk (or did not say): false only when it explicitly said no. */
  wantsStreamUsage: boolean;
}

/** What the pipeline knows of the client's HTTP request, and where it answers: the route builds it. */
export interface RelayContext {
  requestId: string;
  /** The path the client called, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  sink: ClientSink;
  notes: RelayNotes;
}

/** One request on its way through the pipeline. */
interface RelayRun {
  deps: PipelineDeps;
  caller: RelayCaller;
  input: RelayRequest;
  ctx: RelayContext;
  charge: RequestCharge;
  startedMs: number;
  /** Meters the stream against the quota held (relay/overrun). */
  guard: StreamBudget | undefined;
}

const now = () => Date.now();

/**
 * The relay hot path (DESIGN.md §3 steps 3–7) for one request: limits, price and reservation, then
 * attempts on channels picked from the routing index — a failed channel is never tried twice in the
 * same request — and, on success, settlement, the usage record and metrics. The caller has already
 * authenticated the key and parsed the body.
 */
export async function relay(
  deps: PipelineDeps,
  authenticated: RelayCaller,
  input: RelayRequest,
  ctx: RelayContext,
): Promise<void> {
  const started = now();
  const { options } = deps;
  const { user, token } = authenticated.identity;
  const groups = routeGroups(deps.routing, authenticated, input.model);
  // An auto token is priced, limited and reserved in the first auto group that serves the model.
  const first = groups[0] ?? authenticated.group;
  const caller = first === authenticated.group ? authenticated : { ...authenticated, group: first };
  const served = caller.pinnedChannelId !== undefined || deps.routing.candidates(caller.group, input.model).length > 0;
  ctx.notes.note({ format: input.format, group: caller.group, model: served ? input.model : 'unknown' });
  assertModelAllowed(caller, input.model);
  await deps.limits.admit(user.id, caller.group);
  // Before the estimate and the reservation: a refused prompt costs nothing, a masked one is billed as sent.
  // Starred words make the parsed body what goes upstream: the client's own bytes are not passed through.
  if (await deps.sensitive.screen(input.format, input.body)) input.rawBody = undefined;

  const maps = deps.pricing.maps();
  const priceIn = (group: string) =>
    resolvePrice({
      model: input.format === 'openai-responses-compact' ? compactionPriceModel(input.model, maps) : input.model,
      usingGroup: group,
      userGroup: user.group,
      maps,
      options,
      acceptUnset: user.acceptUnsetModels,
    });
  const reservedPrice = priceIn(caller.group);
  const charge = await requestCharge(input.format, input.model, input.body);
  // What a billing expression may read: the same clock for the reservation and the settlement.
  const exprRequest: ExprRequest = { body: input.body, headers: ctx.headers, now: new Date(started) };
  const budget = completionBudget(input.format, input.model, reservedPrice, charge, options, exprRequest);
  const rated = await deps.rateLimits.admit(caller, input.model, charge);
  // A refused reservation gives the rate limits back what the request was counted for.
  const reservation = await reserve(deps, caller, reservedPrice, charge, budget, exprRequest).catch(
    async (error: unknown) => {
      await deps.rateLimits.settle(rated, 0);
      throw error;
    },
  );
  const guard = streamGuardFor(deps, {
    stream: input.stream,
    model: input.model,
    group: caller.group,
    notes: ctx.notes,
    reservation,
    budget,
    price: reservedPrice,
    charge,
    exprRequest,
  });

  let settled = false;
  try {
    const outcome = await attempt({ deps, caller, input, ctx, charge, startedMs: started, guard }, groups);
    // The group that served is the one billed: the ledger settles the difference with the reservation.
    const price = outcome.group === caller.group ? reservedPrice : priceIn(outcome.group);
    const usage = outcome.ending
      ? deliveredUsage(outcome, input.model, charge.promptEstimate)
      : billedUsage(outcome, input.model, charge);
    const { quota, surcharges, tiered } = settleQuota({
      price,
      usage,
      options,
      semantics: claudeUsage(input.format, outcome.upstreamFormat) ? 'claude' : 'openai',
      model: input.model,
      n: imagesToBill(outcome.images, charge.n),
      priceMultiplier: charge.priceMultiplier,
      request: exprRequest,
      estimate: charge,
    });
    // Charged with its consume log, in the batch that writes it (a crash loses both or neither).
    if (reservation) await deps.ledger.settle(reservation, quota, { withLog: true });
    settled = true;
    await deps.rateLimits.settle(rated, usage.promptTokens + usage.completionTokens);
    deps.alerts.charged(user, quota, deps.ledger.balance(user.id));
    deps.recorder.recordConsume({
      userId: user.id,
      username: user.username,
      tokenId: token.id,
      tokenName: token.name,
      channelId: outcome.channel.id,
      channelName: outcome.channel.name,
      modelName: input.model,
      group: outcome.group,
      useTimeSeconds: Math.round((now() - started) / 1000),
      isStream: input.stream,
      ip: '',
      requestId: ctx.requestId,
      content: usage.estimated && price.perCallUsd === undefined ? '上游未返回用量，按本地估算计费' : '',
      quota,
      ledgerCharge: reservation && deps.ledger.chargedAccounts(reservation),
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      clientType: clientType(ctx.headers['user-agent']),
      other: buildConsumeOther({
        price,
        usage,
        firstResponseMs: outcome.firstTokenMs ?? now() - started,
        requestedModel: input.model,
        upstreamModel: outcome.upstreamModel,
        usedChannels: outcome.tried,
        surcharges,
        tiered,
        requestPath: ctx.path,
        formatChain: conversionChain(input.format, outcome.upstreamFormat),
        upstreamFormat: outcome.upstreamFormat,
        claudeUsage: claudeUsage(input.format, outcome.upstreamFormat),
        ...(input.stream
          ? { stream: { endReason: streamEnd(outcome), normal: !outcome.clientGone && !outcome.ending } }
          : {}),
        ...(outcome.affinity ? { channelAffinity: outcome.affinity.logInfo(outcome.channel.id, outcome.group) } : {}),
        route: { ...outcome.route },
        ...(caller.autoGroups ? { extra: { auto_group: outcome.group } } : {}),
      }),
    });
    if (outcome.affinity) await outcome.affinity.succeeded(outcome.channel.id, usage, input.format);
    await deps.limits.succeeded(user.id, caller.group);
    deps.metrics.billed({
      model: input.model,
      group: outcome.group,
      firstTokenMs: outcome.firstTokenMs,
      usage,
      quota,
    });
  } catch (error) {
    if (!settled) {
      if (reservation) await deps.ledger.refund(reservation);
      await deps.rateLimits.settle(rated, 0);
    }
    throw error;
  }
}

/** Why a stream ended, for the consume log: the gateway's ending (stream-ending.ts), the client leaving, or done. */
const streamEnd = (outcome: ExchangeOutcome) => outcome.ending ?? (outcome.clientGone ? 'client_gone' : 'done');

/** Trust quota (reference §5.3): $10 of quota on both the wallet and the token skips the reservation. */
const TRUST_QUOTA_USD = 10;

/**
 * Holds the request's estimated cost on the wallet and token (reference §5.3). A free model holds
 * nothing when `quota_setting.enable_free_model_pre_consume` is off (then even an empty wallet may
 * use it); a caller with more than the trust quota on both wallet and token reserves 0, which still
 * requires a positive balance. A request without max_tokens also holds its completion budget (relay/overrun).
 */
async function reserve(
  deps: PipelineDeps,
  caller: RelayCaller,
  price: ModelPrice,
  charge: RequestCharge,
  budget: CompletionBudget | undefined,
  request: ExprRequest,
): Promise<Reservation | undefined> {
  const { options, ledger } = deps;
  const { user, token } = caller.identity;
  const free = isFreePrice(price);
  if ((free || price.groupRatio === 0) && !options.getBoolean('quota_setting.enable_free_model_pre_consume')) {
    return undefined;
  }
  const hasToken = token.id > 0;
  const trust = TRUST_QUOTA_USD * options.getNumber('QuotaPerUnit');
  // Balances are known once this pod has served the account; until then a refusal loads them.
  const trusted = () =>
    (!hasToken || token.unlimited || (ledger.tokenBalance(token.id) ?? 0) > trust) &&
    (ledger.balance(user.id) ?? 0) > trust;
  const amount =
    preConsumeQuota({
      price,
      promptTokens: charge.promptEstimate,
      maxTokens: charge.maxTokens,
      options,
      n: charge.n,
      priceMultiplier: charge.priceMultiplier,
      request,
    }) + (budget?.quota ?? 0);
  // Period budgets hold the estimate even when the wallet's trust skips it (periods/budget.ts).
  const hold = (reserved: number) =>
    ledger.reserve({
      userId: user.id,
      // The playground has no token (id 0): only the wallet is reserved from.
      tokenId: hasToken ? token.id : undefined,
      tokenUnlimited: token.unlimited,
      amount: reserved,
      periodLimits: { user: user.periodLimits, token: token.periodLimits },
      periodAmount: amount,
    });
  if (trusted()) return hold(0);
  try {
    return await hold(amount);
  } catch (error) {
    if (amount > 0 && trusted()) return hold(0);
    throw error;
  }
}

/**
 * The usage to bill: the upstream's, its missing prompt count filled in from the local estimate, or
 * all of it estimated when the upstream reported none (reference §5.5).
 */
function billedUsage(outcome: Outcome, model: string, charge: RequestCharge): Usage {
  const usage = outcome.usage;
  if (usage && usage.promptTokens > 0) return usage;
  if (usage && usage.completionTokens > 0) return { ...usage, promptTokens: charge.promptEstimate, estimated: true };
  return {
    promptTokens: charge.promptEstimate,
    completionTokens: estimateCompletionTokens(model, outcome.text(), outcome.toolCalls),
    estimated: true,
  };
}

/** Claude's usage semantics (reference §5.4): a Claude-format request, or a Claude upstream. */
const claudeUsage = (client: WireFormat, upstream: WireFormat) =>
  client === 'claude-messages' || upstream === 'claude-messages';

/** An answered attempt, and the channels the request went to. */
interface Outcome extends ExchangeOutcome {
  channel: ChannelSnapshot;
  tried: number[];
  /** The group the channel answered in: billed, logged and counted under it. */
  group: string;
  affinity: RequestAffinity | undefined;
  /** Why the channel was chosen. */
  route: RouteTrace;
}

/** Tries channels in turn (retry rules permitting) until one answers; throws what the client is told. */
async function attempt(run: RelayRun, groups: readonly string[]): Promise<Outcome> {
  const { deps, caller, input, ctx } = run;
  const pinned = caller.pinnedChannelId !== undefined;
  const retries = pinned ? 0 : deps.options.getNumber('RetryTimes');
  const retryRanges = retryStatusRanges(deps.options.get('AutomaticRetryStatusCodes'));
  // Matched without waiting; only a request a rule applies to waits for the shared map.
  const match = pinned
    ? undefined
    : deps.affinity.match({
        path: ctx.path,
        model: input.model,
        group: caller.group,
        headers: ctx.headers,
        body: input.body,
      });
  const affinity = match && (await RequestAffinity.begin(deps.affinity, deps.options, match));
  const plan = new RoutePlan({
    routing: deps.routing,
    groups,
    crossGroup: caller.crossGroupRetry === true,
    retries,
    model: input.model,
    format: input.format,
    preferred: affinity?.remembered,
    blockedSince: (channel) =>
      deps.circuits.blockedSince(channel.id, channel.keys.length, input.model, deps.routing.keyState(channel.id)),
  });
  affinity?.counted(plan);
  const failed = new Set<number>();
  let lastFailure: UpstreamFailure | AppError | undefined;
  let lastChannel: ChannelSnapshot | undefined;
  let lastRoute: RouteTrace | undefined;
  const circuitsSkipped: number[] = [];
  const routeHeader = wantsRouteHeader(ctx.headers, caller.identity.user.role, deps.options);

  for (let index = 0, putBacks = 0; ; index++) {
    const pick: (Omit<Pick, 'reason'> & { reason: PickReason | 'pinned' }) | undefined = pinned
      ? index === 0
        ? { ...pinnedPick(deps.routing, caller), reason: 'pinned' }
        : undefined
      : plan.next();
    if (!pick) break;
    const { channel } = pick;
    const reason = pick.reason;
    if (reason !== 'pinned') circuitsSkipped.push(...reason.circuitsSkipped);
    // Another request holding this circuit's half-open probe: pick again, without spending an attempt
    // (bounded: after that many rounds the channel is taken as a fallback is).
    const forced = forcedThroughCircuit(reason) || putBacks >= MAX_PUT_BACKS;
    const pass = await passCircuit(deps.circuits, deps.routing, channel, input.model, forced);
    if (!pass) {
      putBacks++;
      circuitsSkipped.push(channel.id);
      plan.putBack(pick);
      index--;
      continue;
    }
    const { keyIndex, ticket } = pass;
    if (index === 0 && affinity) await affinity.picked(channel.id);
    failed.add(channel.id);
    // The channel the request is counted under: the one that answers, or the last one that failed.
    ctx.notes.note({ channel: String(channel.id), group: pick.group });
    const route = routeTrace(
      { channelId: channel.id, group: pick.group, priority: channel.priority, reason },
      index,
      circuitsSkipped,
      ticket?.probe === true,
    );
    lastRoute = route;
    if (routeHeader) ctx.sink.header?.('x-tollgate-route', routeHeaderValue(route));
    try {
      const answered = await call(run, channel, keyIndex, index);
      if (ticket) void deps.circuits.succeeded(ticket);
      return { ...answered, channel, tried: [...failed], group: pick.group, affinity, route };
    } catch (error) {
      if (ticket) void circuitVerdict(deps.circuits, ticket, error);
      if (ctx.sink.started) {
        if (error instanceof StreamBroken) {
          ctx.notes.failed(isTimeout(error.cause) ? 'timeout' : 'upstream');
          throw error.cause;
        }
        throw error;
      }
      const status =
        error instanceof UpstreamFailure ? error.error.status : error instanceof AppError ? error.status : 500;
      const code = error instanceof UpstreamFailure ? error.error.code : error instanceof AppError ? error.code : null;
      // Errors raised before the upstream was reached do not improve on another channel, unless a rule says so.
      const skipRetry = error instanceof RelayRuleError ? error.skipRetry : !(error instanceof UpstreamFailure);
      if (!(error instanceof UpstreamFailure) && !(error instanceof AppError)) throw error;
      // From here on the failure is what the client, the error log and the health records see.
      lastFailure = scrubFailure(deps.secrets, error, channel);
      lastChannel = channel;
      deps.metrics.upstreamError(channel, String(code ?? status));
      void deps.health.failed(channel, error instanceof UpstreamFailure ? error.keyIndex : undefined, {
        status,
        code,
        message: lastFailure.message,
        skipRetry,
      });
      const again = shouldRetry(
        {
          status,
          errorCode: code,
          remainingRetries: pinned ? 0 : plan.remainingRetries(),
          pinned,
          skipRetry,
          affinitySkip: affinity?.skipsRetry(pick.preferred),
        },
        { retryStatusCodes: retryRanges },
      );
      if (!again) break;
    }
  }
  if (lastChannel && lastFailure) {
    const fromUpstream = lastFailure instanceof UpstreamFailure;
    recordRelayFailure(
      deps.recorder,
      caller,
      ctx,
      { model: input.model, stream: input.stream, startedMs: run.startedMs },
      {
        channel: lastChannel,
        tried: [...failed],
        status: lastFailure instanceof UpstreamFailure ? lastFailure.error.status : lastFailure.status,
        code: (lastFailure instanceof UpstreamFailure ? lastFailure.error.code : lastFailure.code) ?? 'upstream_error',
        message: lastFailure.message,
        fromUpstream,
        route: lastRoute,
      },
    );
  }
  if (lastFailure instanceof UpstreamFailure) {
    ctx.notes.failed(isTimeout(lastFailure.cause) ? 'timeout' : 'upstream');
    throw new AppError(
      {
        code: lastFailure.error.code ?? 'upstream_error',
        status: lastFailure.error.status,
        message: { zh: lastFailure.error.message, en: lastFailure.error.message },
      },
      {},
    );
  }
  if (lastFailure) throw lastFailure;
  throw new AppError(RELAY_ERRORS.model_not_found, { group: caller.group, model: input.model });
}

/** Picks given back because another request held a half-open probe (each makes the next pick pass that channel over). */
const MAX_PUT_BACKS = 16;

/** The pinned channel as a pick in the caller's group. */
function pinnedPick(routing: RoutingIndex, caller: RelayCaller): Omit<Pick, 'reason'> {
  return { channel: pinnedChannel(routing, caller), group: caller.group, preferred: false };
}

/** The channel an administrator's `sk-<key>-<channelId>` names, if it exists and is enabled. */
export function pinnedChannel(routing: RoutingIndex, caller: RelayCaller): ChannelSnapshot {
  const channel = routing.channel(caller.pinnedChannelId ?? 0);
  if (!channel) throw new AppError(RELAY_ERRORS.channel_pin_invalid);
  if (channel.status !== 1) throw new AppError(RELAY_ERRORS.channel_pin_disabled);
  return channel;
}

/** One attempt on one channel with the key picked for it: prepare the upstream request, and exchange it. */
async function call(
  run: RelayRun,
  channel: ChannelSnapshot,
  keyIndex: number,
  retryIndex: number,
): Promise<ExchangeOutcome> {
  const { deps, input, ctx, charge } = run;
  const target = upstreamTarget(channel, input.format, input.model, deps.options);
  const key = channel.keys[keyIndex];
  if (keyIndex < 0 || key === undefined) {
    throw new AppError({
      code: 'channel:no_available_key',
      status: 503,
      message: { zh: '渠道没有可用的密钥', en: 'The channel has no enabled key' },
    });
  }
  const prepared = prepareUpstream(target, {
    channel,
    key,
    format: input.format,
    body: input.body,
    rawBody: input.rawBody,
    model: input.model,
    stream: input.stream,
    options: deps.options,
    clientHeaders: ctx.headers,
    requestPath: ctx.path,
    retryIndex,
    userId: run.caller.identity.user.id,
  });
  const exchange = new Exchange({
    channel,
    keyIndex,
    key,
    prepared,
    transport: deps.transport,
    startedMs: run.startedMs,
    client: {
      format: input.format,
      model: input.model,
      stream: input.stream,
      wantsStreamUsage: input.wantsStreamUsage,
      pingIntervalMs: pingInterval(deps.options, input.format),
      streamQueueLength: deps.options.getNumber('StreamCacheQueueLength'),
      promptEstimate: () => charge.promptEstimate,
      draining: deps.streamDrain?.signal,
      onEnding: (reason) => ctx.notes.failed(ENDING_ERROR_TYPES[reason]),
    },
    budget: run.guard,
  });
  return exchange.run(scrubbingSink(ctx.sink, deps.secrets, channel));
}

/** `: PING` lines for a silent upstream; Gemini's clients read every event as JSON, so not for them. */
function pingInterval(options: OptionsService, format: WireFormat): number {
  return options.getBoolean('general_setting.ping_interval_enabled') && format !== 'gemini-generate'
    ? options.getNumber('general_setting.ping_interval_seconds') * 1000
    : 0;
}

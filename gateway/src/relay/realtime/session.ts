import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { settleQuota, type TieredTrace } from '../../domain/billing/index.ts';
import { chargedAccounts, type Reservation } from '../../domain/ledger/ledger.ts';
import { buildConsumeOther } from '../../domain/usage/index.ts';
import { AppError } from '../../errors.ts';
import { requestLanguage, toAppError } from '../../http/errors.ts';
import type { RelayCaller } from '../auth/key-auth.ts';
import { clientType } from '../client-type.ts';
import { recordRelayFailure } from '../error-log.ts';
import type { RelayErrorType } from '../metrics.ts';
import { errorTypeOf, noteRelay, noteSessionFailure } from '../outcome.ts';
import { applyHeaderOverride } from '../overrides/header-override.ts';
import type { PipelineDeps } from '../pipeline.ts';
import { RateLimitError } from '../rate-limits.ts';
import { resolveModelMapping } from '../routing/model-mapping.ts';
import { pickKey } from '../routing/picker.ts';
import { mapStatusCode, retryStatusRanges, shouldRetry } from '../routing/retry.ts';
import type { Pick as RoutePick } from '../routing/route-plan.ts';
import type { ChannelSnapshot, ModelPrice, Usage } from '../types.ts';
import { closeReason, errorEvent, relayFrames, sendableCloseCode, watchLiveness } from './frames.ts';
import { type ResponseRequest, TurnLimits } from './turn-limits.ts';
import { DialError, dialRealtime, realtimeTarget } from './upstream.ts';
import { addUsage, realtimeUsage } from './usage.ts';

/**
 * How long the upstream is still read after the client left, for the responses it was generating:
 * the upstream bills that work, so it is billed too. Bounded, so a silent upstream cannot hold the
 * session open.
 */
const DRAIN_MS = 15_000;
const RESPONSE_CREATE = Buffer.from('"response.create"');
const RESPONSE_CREATED = Buffer.from('"response.created"');
const RESPONSE_DONE = Buffer.from('"response.done"');
const CANCEL_NOT_ACTIVE = Buffer.from('"response_cancel_not_active"');

/** What the route settled before accepting the handshake. */
export interface SessionPlan {
  caller: RelayCaller;
  model: string;
  /** The price in the caller's group (the first group that serves the model). */
  price: ModelPrice;
  /** The price in a group: the session is billed in the group of the channel it was dialled on. */
  priceIn: (group: string) => ModelPrice;
  /** Whether responses are held for on the ledger (not for a free model, unless pre-consume is on). */
  holds: boolean;
  /** The balance check of the first response, made before the handshake was accepted. */
  reservation: Reservation | undefined;
  /** The next channel to dial and the group it serves in (the route plan's, or the pinned channel once). */
  next: () => RoutePick | undefined;
  /** Attempts still allowed after the last one. */
  remainingRetries: () => number;
  /** The administrator's pinned channel, already checked. */
  pinned?: ChannelSnapshot;
  beta: boolean;
  started: number;
}

/**
 * One Realtime session (`GET /v1/realtime`): the client's socket relayed to a channel's, frames
 * passed on as they come. Each `response.done` is charged on the ledger as it arrives, and the next
 * response is held for at once, so a session that has run out of quota is told with an `error`
 * event and closed; what was used is billed. When the client leaves while a response is being
 * generated, the upstream is asked to cancel it and read until its `response.done` (at most
 * DRAIN_MS), so that what the upstream produced is billed. One consume log, with the session's
 * totals, is written when it ends (new-api's `other.ws`). Each response is held to the rate limits
 * (turn-limits.ts): a refused turn is told with an `error` event and the session goes on.
 */
export class RealtimeSession {
  readonly #deps: PipelineDeps;
  readonly #request: FastifyRequest;
  readonly #plan: SessionPlan;
  readonly #client: WebSocket;
  /** The group billed, and its price: the group of the channel the session was dialled on. */
  #group: string;
  #price: ModelPrice;
  #upstream: WebSocket | undefined;
  #reservation: Reservation | undefined;
  readonly #turns: TurnLimits;
  #billing: Promise<void> = Promise.resolve();
  #total: Usage = { promptTokens: 0, completionTokens: 0 };
  #quota = 0;
  /** Expression billing: the last response's tier, the session's summed cost. */
  #tiered: TieredTrace | undefined;
  #responses = 0;
  #channel: ChannelSnapshot | undefined;
  #upstreamModel = '';
  #tried: number[] = [];
  #firstFrameMs: number | undefined;
  /** `response.create` events the client sent that the upstream has not answered with `response.created`. */
  #asked = 0;
  /** Ids of the responses the upstream is generating (created, not done). */
  readonly #active = new Set<string>();
  #closing = false;
  /** Called when nothing is in flight any more while the upstream is read after the client left. */
  #drained: (() => void) | undefined;
  #settling = false;
  #failed = false;
  #ended: Promise<void> | undefined;

  constructor(deps: PipelineDeps, request: FastifyRequest, plan: SessionPlan, client: WebSocket) {
    this.#deps = deps;
    this.#request = request;
    this.#plan = plan;
    this.#client = client;
    this.#group = plan.caller.group;
    this.#price = plan.price;
    this.#reservation = plan.reservation;
    this.#turns = new TurnLimits(deps.rateLimits, deps.options, plan.caller, plan.model);
  }

  /** Dials the upstream and starts relaying; the session then lives until either side closes. */
  async run(): Promise<void> {
    const client = this.#client;
    // What the client sends before the upstream answers waits in TCP, not in memory.
    client.pause();
    client.on('error', (error) => this.#request.log.warn({ err: error }, 'realtime client socket failed'));
    client.on('close', (code, reason) => void this.close(code, closeReason(reason)));
    const upstream = await this.#connect();
    if (!upstream) return;
    if (this.#closing) {
      upstream.resume();
      upstream.close(1000);
      return;
    }
    this.#upstream = upstream;
    relayFrames(
      client,
      upstream,
      (data, isBinary) => this.#inspectClient(data, isBinary),
      (data, isBinary) => this.#screenClient(data, isBinary),
    );
    relayFrames(
      upstream,
      client,
      (data, isBinary) => this.#inspect(data, isBinary),
      (data, isBinary) => this.#scrubUpstream(data, isBinary),
    );
    upstream.on('error', (error) => {
      this.#request.log.warn({ err: error }, 'realtime upstream socket failed');
      this.#fail('upstream');
    });
    upstream.on('close', (code, reason) => this.close(code, closeReason(reason)));
    // The transport abandons an upstream silent for this long; a session's sockets must at least answer pings.
    const silenceMs = this.#deps.transport.timeouts.bodyTimeoutMs;
    watchLiveness(upstream, silenceMs, () => {
      this.#fail('timeout');
      const message = `the upstream answered nothing for ${silenceMs / 1000}s`;
      this.#send(errorEvent('server_error', 'upstream_timeout', this.#withRequestId(message)));
      upstream.terminate();
      void this.close(1011, 'upstream timeout');
    });
    watchLiveness(client, silenceMs, () => client.terminate());
    upstream.resume();
    client.resume();
  }

  /**
   * Ends the session (once; the code is passed on): closes the client's socket, reads the upstream
   * until the responses in flight are done, closes it, and settles.
   */
  close(code = 1000, reason = ''): Promise<void> {
    this.#ended ??= (async () => {
      this.#closing = true;
      shut(this.#client, code, reason);
      await this.#drain();
      // What the upstream still sends during its closing handshake is past the session's books.
      this.#settling = true;
      shut(this.#upstream, code, reason);
      await this.#finish();
    })();
    return this.#ended;
  }

  /** Waits (at most DRAIN_MS) for the responses in flight to be done, having asked the upstream to cancel them. */
  async #drain(): Promise<void> {
    const upstream = this.#upstream;
    if (!upstream || upstream.readyState !== upstream.OPEN || this.#idle()) return;
    if (upstream.isPaused) upstream.resume();
    // Nobody hears the rest: the upstream stops, and answers `response.done` with the usage so far.
    upstream.send(JSON.stringify({ type: 'response.cancel' }));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#drained?.(), DRAIN_MS);
      this.#drained = () => {
        this.#drained = undefined;
        clearTimeout(timer);
        upstream.off('close', done);
        resolve();
      };
      const done = () => this.#drained?.();
      upstream.once('close', done);
    });
  }

  #idle(): boolean {
    return this.#asked === 0 && this.#active.size === 0;
  }

  /** Opens the upstream socket on a channel that serves the model, retrying others as the relay does. */
  async #connect(): Promise<WebSocket | undefined> {
    const deps = this.#deps;
    const plan = this.#plan;
    const retryRanges = retryStatusRanges(deps.options.get('AutomaticRetryStatusCodes'));
    let lastError = 'no channel serves the Realtime API for this model';
    let lastFailure: { channel: ChannelSnapshot; error: DialError; message: string } | undefined;
    for (let pick = plan.next(); pick && !this.#closing; pick = plan.next()) {
      const { channel } = pick;
      this.#tried.push(channel.id);
      const keyIndex = pickKey(channel, deps.routing.keyState(channel.id));
      const attempt = await this.#dial(channel, keyIndex, pick.group);
      if (!(attempt instanceof DialError)) return attempt;
      // As the relay treats a failed attempt: counted, through the auto-disable rules, retried where they allow.
      // The upstream's refusal may quote the key: the client, the error log and the health records see it scrubbed.
      lastError = deps.secrets.scrub(attempt.message, channel);
      lastFailure = { channel, error: attempt, message: lastError };
      deps.metrics.upstreamError(channel, attempt.code);
      void deps.health.failed(channel, attempt.fromUpstream ? keyIndex : undefined, {
        status: attempt.status,
        code: attempt.code,
        message: lastError,
        skipRetry: !attempt.fromUpstream,
      });
      const again = shouldRetry(
        {
          status: mapStatusCode(attempt.status, channel.statusCodeMapping),
          errorCode: attempt.code,
          remainingRetries: plan.remainingRetries(),
          pinned: plan.pinned !== undefined,
          skipRetry: !attempt.fromUpstream,
        },
        { retryStatusCodes: retryRanges },
      );
      if (!again) break;
    }
    noteRelay(this.#request, { channel: String(this.#tried.at(-1) ?? 'none') });
    if (lastFailure) {
      recordRelayFailure(
        deps.recorder,
        plan.caller,
        { requestId: this.#request.id, path: this.#request.url.split('?')[0] ?? '' },
        { model: plan.model, stream: true, startedMs: plan.started },
        {
          channel: lastFailure.channel,
          tried: this.#tried,
          status: lastFailure.error.status,
          code: lastFailure.error.code,
          message: lastFailure.message,
          fromUpstream: lastFailure.error.fromUpstream,
        },
      );
    }
    this.#fail(this.#tried.length > 0 ? 'upstream' : 'no_channel');
    this.#send(errorEvent('server_error', 'upstream_unreachable', this.#withRequestId(lastError)));
    void this.close(1011, 'upstream unavailable');
    return undefined;
  }

  /**
   * An upstream event that mentions an error goes to the client without the channel's or the gateway's
   * secrets; other frames (audio, text deltas) pass untouched, not parsed.
   */
  #scrubUpstream(data: Buffer, isBinary: boolean): Buffer {
    if (isBinary || !data.includes('"error"')) return data;
    let event: unknown;
    try {
      event = JSON.parse(data.toString('utf8'));
    } catch {
      return Buffer.from(this.#deps.secrets.scrub(data.toString('utf8'), this.#channel));
    }
    return Buffer.from(JSON.stringify(this.#deps.secrets.scrubDeep(event, this.#channel)));
  }

  /**
   * One attempt on a channel: its open socket, or why not (the channel's settings, or the upstream's
   * refusal). The session is billed in the group the channel that opened serves in.
   */
  async #dial(channel: ChannelSnapshot, keyIndex: number, group: string): Promise<WebSocket | DialError> {
    const plan = this.#plan;
    const key = channel.keys[keyIndex];
    const mapping = resolveModelMapping(plan.model, channel.modelMapping);
    if (!mapping.ok) return settingError(mapping.error);
    if (key === undefined)
      return new DialError(503, 'channel:no_available_key', 'the channel has no enabled key', false);
    const target = realtimeTarget(channel, key, mapping.upstreamModel, plan.beta);
    // The channel's header_override applies to its handshake as to any other upstream request.
    const headerError = applyHeaderOverride(target.headers, channel.headerOverride, {
      apiKey: key,
      clientHeaders: this.#request.headers,
    });
    if (headerError) return settingError(headerError);
    try {
      const socket = await dialRealtime(target, channel, this.#deps.transport.timeouts.headersTimeoutMs);
      noteRelay(this.#request, { channel: String(channel.id), group });
      this.#channel = channel;
      if (group !== this.#group) {
        this.#group = group;
        this.#price = plan.priceIn(group);
      }
      this.#upstreamModel = mapping.upstreamModel;
      return socket;
    } catch (error) {
      return error instanceof DialError ? error : new DialError(502, 'upstream_unreachable', String(error));
    }
  }

  /**
   * The sensitive-word check of a client event: one with a listed word is answered with an `error`
   * event and not passed on (the session goes on), or passed on with the words starred. A
   * `response.create` is then passed on only once the rate limits admitted its turn.
   */
  #screenClient(data: Buffer, isBinary: boolean): Buffer | undefined | Promise<Buffer | undefined> {
    if (isBinary) return data;
    const screened = this.#deps.sensitive.screenFrame(data);
    if (screened instanceof AppError) {
      const message = this.#withRequestId(screened.localized(requestLanguage(this.#request)));
      this.#send(errorEvent('invalid_request_error', screened.code, message));
      return undefined;
    }
    if (!screened.includes(RESPONSE_CREATE)) return screened;
    const event = parseEvent(screened) as { type?: unknown; response?: ResponseRequest } | undefined;
    if (event?.type !== 'response.create') return screened;
    return this.#turns.ask(event.response).then(
      () => screened,
      (error: unknown) => {
        this.#refuseTurn(error);
        return undefined;
      },
    );
  }

  /** Tells the client a turn was refused (a rate limit, in OpenAI's `requests`/`tokens` error types). */
  #refuseTurn(error: unknown): void {
    const appError = toAppError(error);
    const type = error instanceof RateLimitError ? (error.kind === 'rpm' ? 'requests' : 'tokens') : 'server_error';
    this.#send(
      errorEvent(type, appError.code, this.#withRequestId(appError.localized(requestLanguage(this.#request)))),
    );
  }

  /** A response the upstream started by itself was refused by the rate limits: it is cancelled. */
  #refuseServerTurn(responseId: string, error: unknown): void {
    this.#refuseTurn(error);
    const upstream = this.#upstream;
    if (upstream && upstream.readyState === upstream.OPEN) {
      upstream.send(JSON.stringify({ type: 'response.cancel', response_id: responseId }));
    }
  }

  /** Client events pass through as screened; a `response.create` is counted as in flight. */
  #inspectClient(data: Buffer, isBinary: boolean): void {
    if (isBinary || !data.includes(RESPONSE_CREATE)) return;
    if (parseEvent(data)?.type === 'response.create') this.#asked += 1;
  }

  /**
   * Server events pass through untouched; `response.created` and `response.done` are also read to
   * know what is in flight, and `response.done` for its usage.
   */
  #inspect(data: Buffer, isBinary: boolean): void {
    this.#firstFrameMs ??= Date.now() - this.#plan.started;
    if (isBinary || this.#settling) return;
    if (data.includes(RESPONSE_CREATED)) {
      const event = parseEvent(data);
      if (event?.type === 'response.created') {
        this.#asked = Math.max(0, this.#asked - 1);
        const id = event.response?.id;
        if (typeof id === 'string') {
          this.#active.add(id);
          void this.#turns.created(id).then((refusal) => {
            if (refusal) this.#refuseServerTurn(id, refusal);
          });
        }
      }
      return;
    }
    // The upstream answers the cancel sent after the client left once it has handled every earlier
    // client event: from then on, no response the client asked for is still to be created.
    if (this.#drained && data.includes(CANCEL_NOT_ACTIVE)) {
      this.#asked = 0;
      if (this.#idle()) this.#drained();
      return;
    }
    if (!data.includes(RESPONSE_DONE)) return;
    const event = parseEvent(data);
    if (event?.type !== 'response.done') return;
    if (typeof event.response?.id === 'string') this.#active.delete(event.response.id);
    if (this.#drained && event.response?.status === 'cancelled') this.#asked = 0;
    const usage = realtimeUsage(event.response?.usage);
    if (usage) {
      this.#turns.done(typeof event.response?.id === 'string' ? event.response.id : undefined, usage);
      this.#bill(usage);
    }
    if (this.#idle()) this.#drained?.();
  }

  #bill(usage: Usage): void {
    this.#billing = this.#billing
      .then(() => this.#charge(usage))
      .catch((error: unknown) => {
        this.#request.log.error({ err: error }, 'realtime charge failed');
        this.#fail('internal');
        void this.close(1011, 'billing failed');
      });
  }

  /** Charges one response, then holds for the next: a refusal ends the session. */
  async #charge(usage: Usage): Promise<void> {
    const deps = this.#deps;
    const plan = this.#plan;
    const { user, token } = plan.caller.identity;
    const { quota, tiered } = settleQuota({
      price: this.#price,
      usage,
      options: deps.options,
      semantics: 'openai',
      model: plan.model,
      request: { headers: this.#request.headers },
    });
    if (tiered) this.#tiered = { ...tiered, costUsd: tiered.costUsd + (this.#tiered?.costUsd ?? 0) };
    const held = this.#reservation;
    this.#reservation = undefined;
    // Nothing holds for a response that finished after the session was refused more, or after the
    // response before it while the client was gone: the upstream did the work, so it is owed.
    // Charged with the session's consume log, in the batch that writes it (a crash loses both or neither).
    if (held) await deps.ledger.settle(held, quota, { withLog: true });
    else if (quota > 0) {
      await deps.ledger.chargeOwed(
        {
          userId: user.id,
          tokenId: token.id,
          tokenUnlimited: token.unlimited,
          periodLimits: { user: user.periodLimits, token: token.periodLimits },
        },
        quota,
        { withLog: true },
      );
    }
    this.#quota += quota;
    this.#total = addUsage(this.#total, usage);
    this.#responses += 1;
    deps.alerts.charged(user, quota, deps.ledger.balance(user.id));
    deps.metrics.billed({ model: plan.model, group: this.#group, firstTokenMs: undefined, usage, quota });
    if (!plan.holds || this.#closing) return;
    try {
      this.#reservation = await holdNext(deps, plan.caller);
    } catch (error) {
      const appError = toAppError(error);
      this.#fail(errorTypeOf(error));
      const quotaShort = errorTypeOf(error) === 'quota';
      this.#send(
        errorEvent(
          quotaShort ? 'insufficient_quota' : 'server_error',
          quotaShort ? 'insufficient_quota' : appError.code,
          this.#withRequestId(appError.localized(requestLanguage(this.#request))),
        ),
      );
      void this.close(1008, quotaShort ? 'insufficient quota' : 'quota unavailable');
    }
  }

  #send(event: object): void {
    if (this.#client.readyState === this.#client.OPEN) this.#client.send(JSON.stringify(event));
  }

  #withRequestId(message: string): string {
    return `${message} (request id: ${this.#request.id})`;
  }

  #fail(type: RelayErrorType): void {
    this.#failed = true;
    noteSessionFailure(this.#request, type);
  }

  /** Waits for the last charge, releases the open hold, writes the session's consume log. */
  async #finish(): Promise<void> {
    await this.#billing;
    await this.#turns.close();
    const deps = this.#deps;
    const plan = this.#plan;
    if (this.#reservation) await deps.ledger.refund(this.#reservation);
    this.#reservation = undefined;
    const channel = this.#channel;
    if (!channel) return;
    if (!this.#failed) await deps.limits.succeeded(plan.caller.identity.user.id, plan.caller.group);
    if (this.#responses === 0) return;
    const { user, token } = plan.caller.identity;
    deps.recorder.recordConsume({
      userId: user.id,
      username: user.username,
      tokenId: token.id,
      tokenName: token.name,
      channelId: channel.id,
      channelName: channel.name,
      modelName: plan.model,
      group: this.#group,
      useTimeSeconds: Math.round((Date.now() - plan.started) / 1000),
      isStream: true,
      ip: '',
      requestId: this.#request.id,
      content: '',
      quota: this.#quota,
      ledgerCharge: chargedAccounts({ userId: user.id, tokenId: token.id, tokenUnlimited: token.unlimited }),
      promptTokens: this.#total.promptTokens,
      completionTokens: this.#total.completionTokens,
      clientType: clientType(this.#request.headers['user-agent']),
      other: buildConsumeOther({
        price: this.#price,
        usage: this.#total,
        firstResponseMs: this.#firstFrameMs ?? Date.now() - plan.started,
        requestedModel: plan.model,
        upstreamModel: this.#upstreamModel,
        usedChannels: this.#tried,
        requestPath: '/v1/realtime',
        mode: 'realtime',
        ...(this.#tiered ? { tiered: this.#tiered } : {}),
        ...(plan.caller.autoGroups ? { extra: { auto_group: this.#group } } : {}),
      }),
    });
  }
}

interface ServerEvent {
  type?: unknown;
  response?: { id?: unknown; status?: unknown; usage?: unknown };
}

function parseEvent(data: Buffer): ServerEvent | undefined {
  try {
    const event: unknown = JSON.parse(data.toString('utf8'));
    return typeof event === 'object' && event !== null ? (event as ServerEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** Closes a socket that is still open (the code is passed on); the closing handshake needs the peer's frame read. */
function shut(socket: WebSocket | undefined, code: number, reason: string): void {
  if (socket && (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING)) {
    if (socket.isPaused) socket.resume();
    socket.close(sendableCloseCode(code), reason);
  }
}

/** A channel setting the handshake cannot be built from (its `channel:*` code blames the channel). */
const settingError = (error: AppError) => new DialError(error.status, error.code, error.message, false);

/** Holds for the next response: nothing is set aside, but the wallet and a limited token must still have quota. */
export function holdNext(deps: PipelineDeps, caller: RelayCaller): Promise<Reservation> {
  const { user, token } = caller.identity;
  return deps.ledger.reserve({
    userId: user.id,
    tokenId: token.id,
    tokenUnlimited: token.unlimited,
    amount: 0,
    periodLimits: { user: user.periodLimits, token: token.periodLimits },
  });
}

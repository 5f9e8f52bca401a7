import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WebSocketServer } from 'ws';
import { isFreePrice, resolvePrice } from '../../domain/billing/index.ts';
import type { Reservation } from '../../domain/ledger/ledger.ts';
import { AppError } from '../../errors.ts';
import { assertModelAllowed, type RelayCaller } from '../auth/key-auth.ts';
import { assertModelName } from '../bounds/request-bounds.ts';
import { RELAY_ERRORS } from '../errors.ts';
import { noteRelay } from '../outcome.ts';
import { type PipelineDeps, pinnedChannel } from '../pipeline.ts';
import { inGroup, routeGroups } from '../routing/auto-group.ts';
import { RoutePlan } from '../routing/route-plan.ts';
import type { ChannelSnapshot } from '../types.ts';
import { closeReason } from './frames.ts';
import { holdNext, RealtimeSession, type SessionPlan } from './session.ts';
import { takeUpgrade } from './upgrade.ts';
import { servesRealtime, wantsBeta } from './upstream.ts';

export { routeUpgrades } from './upgrade.ts';

const REALTIME_SUBPROTOCOL = 'realtime';

/**
 * `GET /v1/realtime?model=` (OpenAI's Realtime API over a WebSocket). Everything that can refuse the
 * session is checked before the handshake is accepted, and refused in HTTP in OpenAI's error shape
 * (the key 401, the model 403, no channel 503, a rate limit 429 with `Retry-After`, no quota 403);
 * the rest is the session's.
 */
export function realtimeRoute(app: FastifyInstance, deps: PipelineDeps, maxPayload: number): void {
  const server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload,
    // OpenAI's browser clients offer `realtime` (with the key as another subprotocol) and expect it back.
    handleProtocols: (offered) => (offered.has(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : false),
  });
  const live = new Set<RealtimeSession>();
  // Open sessions would hold the server open: they are closed (and billed) before HTTP drains.
  app.addHook('preClose', async () => {
    await Promise.all([...live].map((session) => session.close(1001, 'server shutting down')));
  });

  app.get('/v1/realtime', { config: { relayFormat: 'openai-realtime' } }, async (request, reply) => {
    const upgrade = takeUpgrade(request);
    if (!upgrade || String(request.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      throw new AppError(RELAY_ERRORS.websocket_required);
    }
    const plan = await planSession(deps, request);
    reply.hijack();
    let accepted = false;
    // A handshake ws refused (a malformed key, a wrong version) leaves the first hold to give back.
    upgrade.socket.once('close', () => {
      if (!accepted) void release(deps, plan.reservation);
    });
    server.handleUpgrade(request.raw, upgrade.socket, upgrade.head, (client) => {
      accepted = true;
      noteRelay(request, { upgraded: true });
      const session = new RealtimeSession(deps, request, plan, client);
      live.add(session);
      // The client's close code is passed on to the upstream.
      client.once('close', (code, reason) => {
        void session.close(code, closeReason(reason)).finally(() => live.delete(session));
      });
      session.run().catch((error: unknown) => {
        request.log.error({ err: error }, 'realtime session failed');
        void session.close(1011, 'internal error');
      });
    });
    return reply;
  });
}

/** The session's caller, model, price, channels and first hold, or the HTTP refusal. */
async function planSession(deps: PipelineDeps, request: FastifyRequest): Promise<SessionPlan> {
  const authenticated = request.relayCaller;
  if (!authenticated) throw new AppError(RELAY_ERRORS.invalid_token);
  const model = (request.query as { model?: unknown }).model;
  if (typeof model !== 'string' || !model) throw new AppError(RELAY_ERRORS.model_required);
  assertModelName(model);
  const { user } = authenticated.identity;
  const groups = routeGroups(deps.routing, authenticated, model);
  // As the relay does: an auto token is limited and held in the first auto group that serves the model.
  const caller = inGroup(authenticated, groups[0] ?? authenticated.group);
  const served = caller.pinnedChannelId !== undefined || deps.routing.candidates(caller.group, model).length > 0;
  noteRelay(request, { format: 'openai-realtime', group: caller.group, model: served ? model : 'unknown' });
  assertModelAllowed(caller, model);
  await deps.limits.admit(user.id, caller.group);

  const channels = routeChannels(deps, caller, groups, model);
  const maps = deps.pricing.maps();
  const priceIn = (group: string) =>
    resolvePrice({
      model,
      usingGroup: group,
      userGroup: user.group,
      maps,
      options: deps.options,
      acceptUnset: user.acceptUnsetModels,
    });
  const price = priceIn(caller.group);
  const free = isFreePrice(price);
  const holds =
    !(free || price.groupRatio === 0) || deps.options.getBoolean('quota_setting.enable_free_model_pre_consume');
  // The opening is one request for the RPM limits; each turn counts again in the session (turn-limits.ts).
  await deps.rateLimits.admitRequest(caller, model);
  const reservation = holds ? await holdNext(deps, caller) : undefined;
  return {
    caller,
    model,
    price,
    priceIn,
    holds,
    reservation,
    ...channels,
    beta: wantsBeta(request.headers),
    started: Date.now(),
  };
}

/**
 * The channels a session may be dialled on, in the relay's order (routing/route-plan.ts): the pinned
 * one, else the groups' channels that serve Realtime. The first is picked now, so that a session no
 * channel can serve is refused before the handshake.
 */
function routeChannels(
  deps: PipelineDeps,
  caller: RelayCaller,
  groups: readonly string[],
  model: string,
): Pick<SessionPlan, 'next' | 'remainingRetries' | 'pinned'> {
  if (caller.pinnedChannelId !== undefined) {
    const pinned = pinnedChannel(deps.routing, caller);
    if (!servesRealtime(pinned.type)) throw unsupported(pinned);
    const reason = { how: 'only' as const, priority: pinned.priority, circuitsSkipped: [] };
    const picks = [{ channel: pinned, group: caller.group, preferred: false, reason }];
    return { pinned, next: () => picks.shift(), remainingRetries: () => 0 };
  }
  const route = new RoutePlan({
    routing: deps.routing,
    groups,
    crossGroup: caller.crossGroupRetry === true,
    retries: deps.options.getNumber('RetryTimes'),
    model,
    accepts: (channel) => servesRealtime(channel.type),
  });
  const first = route.next();
  if (!first) {
    const other = deps.routing.candidates(caller.group, model)[0]?.channels[0];
    throw other ? unsupported(other) : new AppError(RELAY_ERRORS.model_not_found, { group: caller.group, model });
  }
  const picks = [first];
  return { next: () => picks.shift() ?? route.next(), remainingRetries: () => route.remainingRetries() };
}

const unsupported = (channel: ChannelSnapshot) =>
  new AppError(RELAY_ERRORS.format_unsupported, { format: 'openai-realtime', channel: channel.name });

async function release(deps: PipelineDeps, reservation: Reservation | undefined): Promise<void> {
  if (reservation) await deps.ledger.refund(reservation);
}

import type { FastifyRequest } from 'fastify';
import { usableGroups } from '../../domain/groups.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import { AUTO_GROUP } from '../../domain/tokens/rules.ts';
import { AppError } from '../../errors.ts';
import { RELAY_ERRORS } from '../errors.ts';
import type { KeyCache, KeyIdentity } from './key-cache.ts';

const ADMIN_ROLE = 10;

export interface RelayCaller {
  identity: KeyIdentity;
  /** `sk-<key>-<channelId>`: an administrator's request pinned to one channel (never retried). */
  pinnedChannelId?: number;
  /** The group the request is billed and routed in: the token's, else the owner's; for an auto token, the first auto group. */
  group: string;
  /** An auto token's groups, in order: AutoGroups the owner may use (reference §4.2). */
  autoGroups?: readonly string[];
  /** An auto token's cross_group_retry. */
  crossGroupRetry?: boolean;
}

/**
 * The API key of a relay request, wherever the client put it (reference §3.1): Anthropic clients send
 * x-api-key, Gemini clients x-goog-api-key or ?key=, everyone else a bearer token.
 */
export function extractKey(request: FastifyRequest): string | undefined {
  const headers = request.headers;
  const path = request.url;
  if (path.startsWith('/v1beta/') || path.startsWith('/v1/models/')) {
    const google = headers['x-goog-api-key'];
    if (typeof google === 'string' && google) return google;
    const query = (request.query as { key?: unknown } | undefined)?.key;
    if (typeof query === 'string' && query) return query;
  }
  const anthropic = headers['x-api-key'];
  if (
    typeof anthropic === 'string' &&
    anthropic &&
    (path.startsWith('/v1/messages') || path.startsWith('/v1/models'))
  ) {
    return anthropic;
  }
  // Browsers cannot set headers on a WebSocket, so OpenAI's clients put the key in the subprotocol list.
  const subprotocolKey = realtimeSubprotocolKey(headers['sec-websocket-protocol']);
  if (subprotocolKey) return subprotocolKey;
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^bearer\s+(.+)$/i.exec(authorization.trim());
    if (match?.[1]) return match[1].trim();
  }
  const mj = headers['mj-api-secret'];
  return typeof mj === 'string' && mj ? mj : undefined;
}

const SUBPROTOCOL_KEY_PREFIX = 'openai-insecure-api-key.';

/** The key in `Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.<key>, …`, if one is there. */
export function realtimeSubprotocolKey(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return undefined;
  for (const part of value.split(',')) {
    const protocol = part.trim();
    if (protocol.startsWith(SUBPROTOCOL_KEY_PREFIX) && protocol.length > SUBPROTOCOL_KEY_PREFIX.length) {
      return protocol.slice(SUBPROTOCOL_KEY_PREFIX.length);
    }
  }
  return undefined;
}

/**
 * Checks a relay request's key, its token and owner (reference §3.2); throws the relay's errors. Answers
 * at once, without a promise, when the key is in memory (every request but a key's first in a while),
 * so that the relay's hook costs no trip through the microtask queue; else once the key is read.
 */
export function authenticateKey(
  request: FastifyRequest,
  keys: KeyCache,
  options: OptionsService,
): RelayCaller | Promise<RelayCaller> {
  const raw = extractKey(request);
  if (!raw) throw new AppError(RELAY_ERRORS.invalid_token);
  const [bare, pin] = keyParts(raw);
  if (!bare) throw new AppError(RELAY_ERRORS.invalid_token);
  const cached = keys.cached(bare);
  if (cached !== undefined) return checkCaller(request, cached ?? undefined, pin, options);
  return keys.lookup(bare).then((identity) => checkCaller(request, identity, pin, options));
}

/**
 * A presented key's parts, `sk-<key>[-<channel id>]`: the key without `sk-`, and what follows its
 * first dash up to the next, if anything does. (What `replace(/^sk-/, '').split('-')` answered, without
 * a regular expression and an array of every part on every request.)
 */
export function keyParts(raw: string): [key: string, pin: string | undefined] {
  const key = raw.startsWith('sk-') ? raw.slice(3) : raw;
  const first = key.indexOf('-');
  if (first < 0) return [key, undefined];
  const second = key.indexOf('-', first + 1);
  return [key.slice(0, first), second < 0 ? key.slice(first + 1) : key.slice(first + 1, second)];
}

function checkCaller(
  request: FastifyRequest,
  identity: KeyIdentity | undefined,
  pin: string | undefined,
  options: OptionsService,
): RelayCaller {
  if (!identity) throw new AppError(RELAY_ERRORS.invalid_token);
  const { token, user } = identity;
  if (token.status !== 1) throw new AppError(RELAY_ERRORS.token_disabled);
  if (token.expiredTime !== -1 && token.expiredTime < Date.now() / 1000) throw new AppError(RELAY_ERRORS.token_expired);
  if (token.allowIps && !token.allowIps.check(request.ip, request.ip.includes(':') ? 'ipv6' : 'ipv4')) {
    throw new AppError(RELAY_ERRORS.access_denied);
  }
  if (user.status !== 1) throw new AppError(RELAY_ERRORS.user_banned);

  const routed = routedGroups(identity, options);

  if (pin === undefined) return routed;
  if (user.role < ADMIN_ROLE) throw new AppError(RELAY_ERRORS.channel_pin_forbidden);
  const pinnedChannelId = Number(pin);
  if (!Number.isSafeInteger(pinnedChannelId) || pinnedChannelId <= 0)
    throw new AppError(RELAY_ERRORS.channel_pin_invalid);
  return { ...routed, pinnedChannelId };
}

/**
 * The group(s) a caller's requests go to: the token's group (else the owner's), which the owner must be
 * allowed to use; for a token in `auto`, AutoGroups filtered to the owner's usable groups, in order.
 */
function routedGroups(identity: KeyIdentity, options: OptionsService): RelayCaller {
  const { token, user } = identity;
  const usable = usableGroups(options, user.group);
  if (token.group === AUTO_GROUP) {
    const autoGroups = options.getJson<string[]>('AutoGroups').filter((group) => Object.hasOwn(usable, group));
    const first = autoGroups[0];
    if (first === undefined) throw new AppError(RELAY_ERRORS.group_not_usable, { group: AUTO_GROUP });
    return { identity, group: first, autoGroups, crossGroupRetry: token.crossGroupRetry };
  }
  const group = token.group || user.group;
  if (!(group in usable)) throw new AppError(RELAY_ERRORS.group_not_usable, { group });
  return { identity, group };
}

/** Token model limits (reference §3.2): with limits on, only the listed models. */
export function assertModelAllowed(caller: RelayCaller, model: string): void {
  const limits = caller.identity.token.modelLimits;
  if (limits && !limits.has(model)) throw new AppError(RELAY_ERRORS.model_not_allowed, { model });
}

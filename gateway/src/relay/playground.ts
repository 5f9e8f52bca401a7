import type { FastifyInstance } from 'fastify';
import type { authGuards } from '../api/auth.ts';
import { signedIn } from '../api/auth.ts';
import { usableGroups } from '../domain/groups.ts';
import type { Keyring } from '../domain/keyring.ts';
import { AppError } from '../errors.ts';
import type { RelayCaller } from './auth/key-auth.ts';
import { relayUser } from './auth/key-cache.ts';
import { parseJsonWithinDepth } from './bounds/json-depth.ts';
import { assertRequestBounds } from './bounds/request-bounds.ts';
import { relayContext } from './client-sink.ts';
import { RELAY_ERRORS } from './errors.ts';
import { ClientGone } from './exchange/failure.ts';
import type { RelayPluginDeps } from './index.ts';
import { errorTypeOf, noteRelayFailure, trackRelayOutcome } from './outcome.ts';
import { type RelayRequest, relay } from './pipeline.ts';
import { setRetryAfter } from './retry-after.ts';

/**
 * POST /pg/chat/completions: the console's playground (spec doc 3 §2, reference Appendix B). It signs
 * in with the dashboard session instead of an API key, may pick any of the user's usable groups, and
 * charges the wallet only (there is no token).
 */
export async function playgroundPlugin(
  app: FastifyInstance,
  deps: { relay: RelayPluginDeps; guards: ReturnType<typeof authGuards>; keyring: Keyring },
): Promise<void> {
  app.decorateRequest('auth', null);
  // The relay's JSON depth bound, on the bytes before they are parsed.
  parseJsonWithinDepth(app);
  // Playground requests are relay requests too: counted whatever happens, their errors rendered as the
  // rest of the console's (the parent's error handler).
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    noteRelayFailure(request, reply, errorTypeOf(error));
    // Nobody is left to answer: counted (499), not rendered or logged as a fault.
    if (error instanceof ClientGone) return;
    throw error;
  });
  app.post(
    '/pg/chat/completions',
    {
      onRequest: async (request, reply) => trackRelayOutcome(request, reply, deps.relay.metrics, 'openai-chat'),
      preHandler: deps.guards.user,
      bodyLimit: deps.relay.bodyLimitBytes,
    },
    async (request, reply) => {
      const user = signedIn(request).user;
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new AppError(RELAY_ERRORS.invalid_request, { detail: 'the body must be a JSON object' });
      }
      const json = body as Record<string, unknown>;
      const model = typeof json.model === 'string' ? json.model : '';
      if (!model) throw new AppError(RELAY_ERRORS.model_required);
      const group = typeof json.group === 'string' && json.group ? json.group : user.group;
      if (!(group in usableGroups(deps.relay.options, user.group)))
        throw new AppError(RELAY_ERRORS.group_not_usable, { group });
      const { group: _group, ...upstreamBody } = json;
      const caller: RelayCaller = {
        group,
        identity: {
          token: {
            id: 0,
            name: `playground-${group}`,
            status: 1,
            expiredTime: -1,
            unlimited: true,
            modelLimits: null,
            allowIps: null,
            group,
            crossGroupRetry: false,
            periodLimits: {},
            rateLimits: {},
          },
          user: relayUser(user, deps.keyring),
        },
      };
      const streamOptions = json.stream_options as { include_usage?: unknown } | undefined;
      const input: RelayRequest = {
        format: 'openai-chat',
        model,
        body: upstreamBody,
        stream: json.stream === true,
        wantsStreamUsage: streamOptions?.include_usage !== false,
      };
      assertRequestBounds(input);
      await relay(deps.relay, caller, input, relayContext(request, reply));
      return reply;
    },
  );
}

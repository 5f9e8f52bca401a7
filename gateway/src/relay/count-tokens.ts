import type { FastifyRequest } from 'fastify';
import { estimateClaudePromptTokens } from '../domain/billing/index.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { AppError } from '../errors.ts';
import { assertModelAllowed, type RelayCaller } from './auth/key-auth.ts';
import { RELAY_ERRORS } from './errors.ts';
import { applyHeaderOverride } from './overrides/header-override.ts';
import { pinnedChannel } from './pipeline.ts';
import { providerFor, sendUpstream } from './protocols/index.ts';
import type { RoutingIndex } from './routing/index-cache.ts';
import { resolveModelMapping } from './routing/model-mapping.ts';
import { pickChannel, pickKey } from './routing/picker.ts';
import type { Transport } from './transport.ts';

export interface CountTokensDeps {
  options: OptionsService;
  routing: RoutingIndex;
  transport: Transport;
}

/**
 * `POST /v1/messages/count_tokens` (Anthropic's token counting, which Claude Code calls): the input
 * tokens a Messages request would use. Routed like the request itself — the same model, key limits
 * and channel choice — and answered by the channel's upstream when its protocol counts tokens
 * (Anthropic), else from the local estimate the relay reserves quota by. Never billed: Anthropic
 * does not charge for counting, and nothing is generated (new-api has no such route at all).
 */
export async function countTokens(
  deps: CountTokensDeps,
  caller: RelayCaller,
  request: FastifyRequest,
): Promise<{ status: number; body: unknown }> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError(RELAY_ERRORS.invalid_request, { detail: 'the body must be a JSON object' });
  }
  const json = body as Record<string, unknown>;
  const model = typeof json.model === 'string' ? json.model : '';
  if (!model) throw new AppError(RELAY_ERRORS.model_required);
  assertModelAllowed(caller, model);

  const channel =
    caller.pinnedChannelId === undefined
      ? pickChannel({ candidates: deps.routing.candidates(caller.group, model) })
      : pinnedChannel(deps.routing, caller);
  if (!channel) throw new AppError(RELAY_ERRORS.model_not_found, { group: caller.group, model });
  const provider = providerFor(channel.type);
  const keyIndex = pickKey(channel, deps.routing.keyState(channel.id));
  const key = channel.keys[keyIndex];
  if (!provider.buildCountTokensRequest || key === undefined) {
    return { status: 200, body: { input_tokens: estimateClaudePromptTokens(model, json) } };
  }

  const mapping = resolveModelMapping(model, channel.modelMapping);
  if (!mapping.ok) throw mapping.error;
  const upstream = provider.buildCountTokensRequest({
    channel,
    key,
    upstreamModel: mapping.upstreamModel,
    body: JSON.stringify({ ...json, model: mapping.upstreamModel }),
    options: deps.options,
    clientHeaders: request.headers,
  });
  const headerError = applyHeaderOverride(upstream.headers, channel.headerOverride, {
    apiKey: key,
    clientHeaders: request.headers,
  });
  if (headerError) throw headerError;

  let response: Awaited<ReturnType<Transport['send']>>;
  try {
    // The transport's header and body timeouts bound the wait.
    response = await sendUpstream(provider, upstream, {
      channel,
      key,
      transport: deps.transport,
      signal: new AbortController().signal,
      stream: false,
    });
  } catch (error) {
    throw new AppError(RELAY_ERRORS.upstream_unreachable, {
      detail: error instanceof Error ? error.message : String(error),
    });
  }
  const text = await response.body.text();
  if (response.status >= 400) {
    const failure = provider.parseError(response.status, text);
    throw new AppError({
      code: failure.code ?? 'upstream_error',
      status: failure.status,
      message: { zh: failure.message, en: failure.message },
    });
  }
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    throw new AppError(RELAY_ERRORS.upstream_error, { detail: 'the upstream answered invalid JSON' });
  }
}

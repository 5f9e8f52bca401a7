import type { IncomingHttpHeaders } from 'node:http';
import { promptTexts } from '../domain/billing/index.ts';
import { promptCount } from '../domain/billing/prompt-count-pool.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { AppError } from '../errors.ts';
import { assertModelAllowed, type RelayCaller } from './auth/key-auth.ts';
import { assertModelName } from './bounds/request-bounds.ts';
import { RELAY_ERRORS } from './errors.ts';
import { Exchange } from './exchange/exchange.ts';
import { UpstreamFailure } from './exchange/failure.ts';
import type { ClientSink } from './exchange/sink.ts';
import { applyHeaderOverride } from './overrides/header-override.ts';
import { pinnedChannel } from './pipeline.ts';
import { providerFor } from './protocols/index.ts';
import type { RoutingIndex } from './routing/index-cache.ts';
import { resolveModelMapping } from './routing/model-mapping.ts';
import { pickChannel, pickKey } from './routing/picker.ts';
import { scrubFailure } from './secrets/failure.ts';
import type { SecretScrubber } from './secrets/scrubber.ts';
import type { Transport } from './transport.ts';

export interface CountTokensDeps {
  options: OptionsService;
  routing: RoutingIndex;
  transport: Transport;
  secrets: SecretScrubber;
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
  request: { body: unknown; headers: IncomingHttpHeaders },
  sink: ClientSink,
): Promise<void> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError(RELAY_ERRORS.invalid_request, { detail: 'the body must be a JSON object' });
  }
  const json = body as Record<string, unknown>;
  const model = typeof json.model === 'string' ? json.model : '';
  if (!model) throw new AppError(RELAY_ERRORS.model_required);
  assertModelName(model);
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
    const count = await promptCount(model, promptTexts('claude-messages', model, json));
    const counted = { input_tokens: typeof count === 'number' ? count : count() };
    return sink.answer(200, 'application/json; charset=utf-8', Buffer.from(JSON.stringify(counted)));
  }

  const mapping = resolveModelMapping(model, channel.modelMapping);
  if (!mapping.ok) throw mapping.error;
  const upstreamModel = mapping.upstreamModel;
  const upstream = provider.buildCountTokensRequest({
    channel,
    key,
    upstreamModel,
    body: JSON.stringify({ ...json, model: upstreamModel }),
    options: deps.options,
    clientHeaders: request.headers,
  });
  const headerError = applyHeaderOverride(upstream.headers, channel.headerOverride, {
    apiKey: key,
    clientHeaders: request.headers,
  });
  if (headerError) throw headerError;

  // The count is a Claude Messages answer to a Claude client: it passes through as the upstream wrote it.
  // The transport's header and body timeouts bound the wait.
  const exchange = new Exchange({
    channel,
    keyIndex,
    key,
    prepared: {
      provider,
      upstreamFormat: 'claude-messages',
      upstreamModel,
      request: upstream,
      convert: { model, upstreamModel, stream: false },
    },
    transport: deps.transport,
    startedMs: Date.now(),
    client: { format: 'claude-messages', model, stream: false, wantsStreamUsage: false, pingIntervalMs: 0 },
  });
  try {
    await exchange.run(sink);
  } catch (error) {
    throw countFailure(error instanceof UpstreamFailure ? scrubFailure(deps.secrets, error, channel) : error);
  }
}

/** What the client is told when the upstream could not count. */
function countFailure(error: unknown): unknown {
  if (!(error instanceof UpstreamFailure)) return error;
  const { code, status, message } = error.error;
  if (code === 'upstream_unreachable') {
    // The scrubbed message carries the cause's text ("upstream unreachable: …").
    return new AppError(RELAY_ERRORS.upstream_unreachable, {
      detail: message.replace(/^upstream unreachable: /, ''),
    });
  }
  if (code === 'bad_response_body') {
    return new AppError(RELAY_ERRORS.upstream_error, { detail: 'the upstream answered invalid JSON' });
  }
  return new AppError({ code: code ?? 'upstream_error', status, message: { zh: message, en: message } });
}

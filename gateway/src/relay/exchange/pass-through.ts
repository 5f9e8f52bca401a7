import type { OptionsService } from '../../domain/options/index.ts';
import { applyHeaderOverride } from '../overrides/header-override.ts';
import type { Tier } from '../routing/picker.ts';
import type { ChannelSnapshot } from '../types.ts';
import type { AttemptRequest, PreparedUpstream, UpstreamTarget } from './prepare.ts';

/**
 * Pass-through mode (new-api's `global.pass_through_request_enabled` and the channel setting
 * `pass_through_body_enabled`): the upstream gets the client's JSON body byte for byte — no model
 * mapping, no provider defaults, no stream usage request, no param_override, no field filtering —
 * while the channel's header_override still applies. Only where the bytes are something the upstream
 * reads: the request is already in the channel's own format, and the channel's protocol takes that
 * format's body as it is. Anything else (a conversion, a protocol that wraps or signs the body) is
 * prepared as usual.
 */

/** Protocols whose wire body is the client format's body itself (OpenAI and its compatibles, Anthropic, Gemini). */
const RAW_BODY_PROTOCOLS: ReadonlySet<string> = new Set(['openai', 'anthropic', 'gemini']);

/** Whether pass-through is on for this channel: everywhere by the global option, or by the channel's setting. */
export function passThroughEnabled(channel: ChannelSnapshot, options: OptionsService): boolean {
  return (
    options.getBoolean('global.pass_through_request_enabled') || channel.setting?.pass_through_body_enabled === true
  );
}

/**
 * Whether a request for these channels (the candidates, or the one a key pins) may pass its body
 * through: only then are its bytes kept beside the parsed body for the length of the request.
 */
export function mayPassThrough(
  options: OptionsService,
  candidates: readonly Tier[],
  pinned: ChannelSnapshot | undefined,
): boolean {
  if (options.getBoolean('global.pass_through_request_enabled')) return true;
  if (pinned) return pinned.setting?.pass_through_body_enabled === true;
  for (const tier of candidates) {
    for (const channel of tier.channels) if (channel.setting?.pass_through_body_enabled === true) return true;
  }
  return false;
}

/** The client's bytes when this attempt passes them through unchanged; undefined when it is prepared as usual. */
export function passThroughBody(target: UpstreamTarget, input: AttemptRequest): Uint8Array | undefined {
  if (!input.rawBody || input.body instanceof FormData) return undefined;
  if (target.upstreamFormat !== input.format || !RAW_BODY_PROTOCOLS.has(target.provider.name)) return undefined;
  return passThroughEnabled(input.channel, input.options) ? input.rawBody : undefined;
}

/**
 * The upstream request of a pass-through attempt: the provider's URL and credentials for the model
 * the client named (the body names it, so the channel's model_mapping does not apply), the client's
 * bytes as the body, then the channel's header_override.
 */
export function passThroughUpstream(target: UpstreamTarget, input: AttemptRequest, raw: Uint8Array): PreparedUpstream {
  const { provider, upstreamFormat } = target;
  const { channel, key } = input;
  const upstreamModel = input.model;
  const request = provider.buildRequest({
    format: upstreamFormat,
    channel,
    key,
    upstreamModel,
    body: raw,
    json: input.body as Record<string, unknown>,
    stream: input.stream,
    options: input.options,
    clientHeaders: input.clientHeaders,
  });
  const headerError = applyHeaderOverride(request.headers, channel.headerOverride, {
    apiKey: key,
    clientHeaders: input.clientHeaders,
  });
  if (headerError) throw headerError;
  return {
    provider,
    upstreamFormat,
    upstreamModel,
    request,
    convert: { model: input.model, upstreamModel, stream: input.stream },
  };
}

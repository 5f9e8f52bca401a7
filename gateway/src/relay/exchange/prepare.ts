import type { IncomingHttpHeaders } from 'node:http';
import { FormData as UpstreamFormData } from 'undici';
import type { OptionsService } from '../../domain/options/index.ts';
import { AppError } from '../../errors.ts';
import { type ConvertContext, canConvert, convertRequest } from '../convert/index.ts';
import { chatViaResponses } from '../convert/responses-policy.ts';
import type { Json } from '../convert/types.ts';
import { RELAY_ERRORS } from '../errors.ts';
import { applyHeaderOverride } from '../overrides/header-override.ts';
import { applyParamOverride } from '../overrides/param-override.ts';
import { type Provider, providerFor, type UpstreamRequest } from '../protocols/index.ts';
import { isObject } from '../protocols/upstream-json.ts';
import { resolveModelMapping } from '../routing/model-mapping.ts';
import type { ChannelSnapshot, WireFormat } from '../types.ts';
import { passThroughBody, passThroughUpstream } from './pass-through.ts';

/**
 * How one attempt on one channel turns the client's request into the upstream's, for the relay
 * and the channel tester alike, so that a test sends exactly what a relayed request would (model
 * mapping, format choice and conversion, the provider's finishing touches, the channel's param and
 * header overrides). Two steps, because the relay picks the channel key between them: a channel
 * that cannot serve the request fails before a key is looked for. The credentials are finished
 * when the request is sent (sendUpstream authorizes, then sends), since that may need the network.
 */

/** What a channel is spoken to in for a request: its protocol, the model after mapping, the format. */
export interface UpstreamTarget {
  provider: Provider;
  /** The model after the channel's model_mapping. */
  upstreamModel: string;
  upstreamFormat: WireFormat;
}

/**
 * The target of a `format` request for `model` on `channel`. Throws when the channel cannot serve
 * it: a type Tollgate does not speak, a model mapping cycle, or a format it cannot convert to.
 */
export function upstreamTarget(
  channel: ChannelSnapshot,
  format: WireFormat,
  model: string,
  options: OptionsService,
): UpstreamTarget {
  const provider = providerFor(channel.type);
  const mapping = resolveModelMapping(model, channel.modelMapping);
  if (!mapping.ok) throw mapping.error;
  const upstreamModel = mapping.upstreamModel;
  let upstreamFormat = provider.nativeFormat(format, upstreamModel);
  if (
    upstreamFormat === 'openai-chat' &&
    provider.formats.has('openai-responses') &&
    chatViaResponses(options, channel, upstreamModel)
  ) {
    upstreamFormat = 'openai-responses';
  }
  if (!upstreamFormat || !canConvert(format, upstreamFormat)) {
    throw new AppError(RELAY_ERRORS.format_unsupported, { format, channel: channel.name });
  }
  return { provider, upstreamModel, upstreamFormat };
}

/** The request an attempt starts from, as the client (or the channel tester) made it. */
export interface AttemptRequest {
  channel: ChannelSnapshot;
  /** The channel key picked for this attempt. */
  key: string;
  /** The client's wire format. */
  format: WireFormat;
  /** JSON body (an object), or multipart fields and files. */
  body: Record<string, unknown> | FormData;
  /** The JSON body's bytes as the client sent them (decoded), for pass-through; absent for a channel test. */
  rawBody?: Uint8Array | undefined;
  /** The model the client asked for. */
  model: string;
  stream: boolean;
  options: OptionsService;
  /** The client's request headers; none for a channel test. */
  clientHeaders: IncomingHttpHeaders;
  /** The path the client called, without the query: param_override conditions may test it. */
  requestPath: string;
  /** 0 for the first attempt of a request, 1 for the first retry on another channel, … */
  retryIndex: number;
  /** A channel test, not a client's request: param_override conditions may test it. */
  channelTest?: boolean;
  /** The Tollgate user making the request; absent in channel tests. */
  userId?: number | undefined;
}

export interface PreparedUpstream extends UpstreamTarget {
  /** Built, with the channel's header_override applied; authorized when sent. */
  request: UpstreamRequest;
  /** What converting the answer back to the client's format needs. */
  convert: ConvertContext;
}

/**
 * The upstream request of one attempt: the body converted to the target format and finished by the
 * provider, the channel's param_override applied, serialised once, then the provider's request with
 * the channel's header_override on top. Throws the channel's configuration errors (an invalid
 * override, a setting the provider needs) as RelayRuleErrors.
 */
export function prepareUpstream(target: UpstreamTarget, input: AttemptRequest): PreparedUpstream {
  const raw = passThroughBody(target, input);
  if (raw) return passThroughUpstream(target, input, raw);
  const { provider, upstreamFormat } = target;
  const { channel, key } = input;
  let upstreamModel = target.upstreamModel;
  const convert: ConvertContext = { model: input.model, upstreamModel, stream: input.stream };

  let headerOverride = channel.headerOverride;
  let body: string | FormData;
  /** The JSON body as the param_override left it, for the provider's finishBody and buildRequest. */
  let overriddenJson: Json | undefined;
  if (input.body instanceof FormData) {
    // The pooled transport is the undici package, which only sends its own FormData class.
    const form = new UpstreamFormData();
    for (const [name, value] of input.body) {
      if (typeof value === 'string') form.append(name, name === 'model' ? upstreamModel : value);
      else form.append(name, value, value.name);
    }
    body = form as unknown as FormData;
  } else {
    const prepared = provider.prepareBody(
      upstreamFormat,
      convertRequest(input.format, upstreamFormat, input.body, convert),
      {
        channel,
        model: input.model,
        upstreamModel,
        stream: input.stream,
        options: input.options,
        clientHeaders: input.clientHeaders,
        ...(input.userId === undefined ? {} : { userId: input.userId }),
      },
    );
    upstreamModel = prepared.upstreamModel;
    let json = prepared.body;
    if (input.stream && upstreamFormat === 'openai-chat') {
      // Always asked for, so the bill uses the upstream's count; a client that declined never sees it.
      const streamOptions = (json.stream_options ?? {}) as Record<string, unknown>;
      json = { ...json, stream_options: { ...streamOptions, include_usage: true } };
    }
    const overridden = applyParamOverride(json, channel.paramOverride, {
      model: upstreamModel,
      upstream_model: upstreamModel,
      original_model: input.model,
      request_path: input.requestPath,
      request_headers: input.clientHeaders,
      retry_index: input.retryIndex,
      is_retry: input.retryIndex > 0,
      ...(input.channelTest ? { is_channel_test: true } : {}),
      header_override: channel.headerOverride,
    });
    if (!overridden.ok) throw overridden.error;
    if (overridden.headerOverride) headerOverride = overridden.headerOverride;
    const final = overridden.body;
    if (isObject(final)) overriddenJson = final;
    body = JSON.stringify(
      overriddenJson && provider.finishBody ? provider.finishBody(upstreamFormat, overriddenJson, channel, key) : final,
    );
  }

  const request = provider.buildRequest({
    format: upstreamFormat,
    channel,
    key,
    upstreamModel,
    body,
    json: overriddenJson,
    stream: input.stream,
    options: input.options,
    clientHeaders: input.clientHeaders,
  });
  const headerError = applyHeaderOverride(request.headers, headerOverride, {
    apiKey: key,
    clientHeaders: input.clientHeaders,
  });
  if (headerError) throw headerError;
  return { provider, upstreamFormat, upstreamModel, request, convert };
}

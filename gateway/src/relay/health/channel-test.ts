import type { Logger } from 'pino';
import { resolvePrice, settleQuota } from '../../domain/billing/index.ts';
import { CHANNEL_ERRORS } from '../../domain/channels/errors.ts';
import { CHANNEL_STATUS } from '../../domain/channels/input.ts';
import { channelType, typeLabel } from '../../domain/channels/registry.ts';
import type { ChannelService } from '../../domain/channels/service.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import type { PricingService } from '../../domain/pricing/service.ts';
import { buildConsumeOther, type UsageRecorder } from '../../domain/usage/index.ts';
import { AppError } from '../../errors.ts';
import { Exchange } from '../exchange/exchange.ts';
import { StreamBroken, UpstreamFailure } from '../exchange/failure.ts';
import { type PreparedUpstream, prepareUpstream, upstreamTarget } from '../exchange/prepare.ts';
import { STREAM_ENDINGS } from '../exchange/stream-ending.ts';
import type { RelayMetrics } from '../metrics.ts';
import { isTimeout } from '../outcome.ts';
import { probeRealtime } from '../realtime/probe.ts';
import { servesRealtime } from '../realtime/upstream.ts';
import type { RoutingIndex } from '../routing/index-cache.ts';
import { resolveModelMapping } from '../routing/model-mapping.ts';
import { pickKey } from '../routing/picker.ts';
import type { SecretScrubber } from '../secrets/scrubber.ts';
import type { Transport } from '../transport.ts';
import type { ChannelSnapshot, Usage, WireFormat } from '../types.ts';
import type { ChannelFailure } from './auto-disable.ts';
import type { ChannelHealth } from './channel-health.ts';
import { discardingSink } from './test-sink.ts';

/**
 * new-api's answer to a channel test: `time` in seconds. A failure carries our envelope's stable `code`
 * (CHANNEL_TEST_FAILED) and, when the upstream gave one, its own in `error_code`.
 */
export interface ChannelTestResult {
  success: boolean;
  message: string;
  time: number;
  code?: typeof CHANNEL_TEST_FAILED;
  error_code?: string;
}

export const CHANNEL_TEST_FAILED = 'CHANNEL_TEST_FAILED';

export interface ChannelTestOptions {
  model?: string | undefined;
  /** Forces the endpoint (new-api's names or ours); otherwise guessed from the model's name. */
  endpointType?: string | undefined;
  stream?: boolean | undefined;
  /** Test-all: a slower answer than ChannelDisableThreshold seconds counts as a failure. */
  enforceThreshold?: boolean;
  /** The key of a multi-key channel to test (recovery of a disabled key); else one the channel would use. */
  keyIndex?: number | undefined;
}

export interface ChannelTesterDeps {
  channels: ChannelService;
  routing: RoutingIndex;
  transport: Transport;
  options: OptionsService;
  pricing: PricingService;
  recorder: UsageRecorder;
  health: ChannelHealth;
  metrics: RelayMetrics;
  logger: Logger;
  /** Longest a test may take. */
  timeoutMs: number;
  /** The username of a user id, '' when there is none: a test's log row names the user it belongs to. */
  usernameOf: (userId: number) => Promise<string>;
  /** A test's result is shown in the console and kept on the channel: the upstream's words without secrets. */
  secrets: SecretScrubber;
}

const DEFAULT_TEST_MODEL = 'gpt-4o-mini';
/** The user a test's log belongs to (the first root account), as in new-api. */
const TEST_LOG_USER_ID = 1;

/** The path a client would call for each format a test speaks: param_override conditions may test it. */
const TEST_PATHS: Partial<Record<WireFormat, string>> = {
  'openai-chat': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  'openai-embeddings': '/v1/embeddings',
  'openai-images': '/v1/images/generations',
  rerank: '/v1/rerank',
};

const ENDPOINTS: Record<string, WireFormat> = {
  chat: 'openai-chat',
  openai: 'openai-chat',
  responses: 'openai-responses',
  'openai-response': 'openai-responses',
  embeddings: 'openai-embeddings',
  images: 'openai-images',
  'image-generation': 'openai-images',
  rerank: 'rerank',
  'jina-rerank': 'rerank',
  realtime: 'openai-realtime',
};

/**
 * Channel tests (reference §4.5): one small real request to the channel's upstream, timed. The time
 * is recorded on the channel; a failure goes through the auto-disable rules and a success re-enables
 * a channel the gateway disabled (when AutomaticEnableChannelEnabled is on). Tests cost nobody: the
 * log they leave has quota 0 and says what the call would have cost.
 */
export class ChannelTester {
  readonly #deps: ChannelTesterDeps;
  #runningAll: Promise<void> | undefined;

  constructor(deps: ChannelTesterDeps) {
    this.#deps = deps;
  }

  async test(id: number, options: ChannelTestOptions = {}): Promise<ChannelTestResult> {
    const { routing, channels, metrics, health } = this.#deps;
    const channel = routing.channel(id) ?? (await this.#loaded(id));
    // Task types (images, music, video jobs) and types Tollgate cannot speak have nothing to test.
    if (!channelType(channel.type)?.testable) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_TEST_UNSUPPORTED, { type: typeLabel(channel.type) });
    }
    const model = options.model || channel.testModel || channel.models[0] || DEFAULT_TEST_MODEL;
    const format = endpointFormat(options.endpointType, model, servesRealtime(channel.type));
    const chosen = options.keyIndex;
    const keyIndex =
      chosen !== undefined && chosen >= 0 && chosen < channel.keys.length
        ? chosen
        : Math.max(0, pickKey(channel, routing.keyState(id)));
    const started = performance.now();
    const outcome = await this.#call(channel, keyIndex, model, format, options.stream === true).catch((error) => {
      // A test that could not even be sent (a channel setting the request cannot be built from) failed too.
      metrics.tested(channel, false);
      throw error;
    });
    const elapsedMs = performance.now() - started;
    await channels.recordTest(id, elapsedMs).catch(() => {});

    let failure = outcome.failure && {
      ...outcome.failure,
      message: this.#deps.secrets.scrub(outcome.failure.message, channel),
    };
    const threshold = this.#deps.options.getNumber('ChannelDisableThreshold') * 1000;
    if (!failure && options.enforceThreshold && threshold > 0 && elapsedMs > threshold) {
      failure = {
        status: 408,
        code: 'channel:response_time_exceeded',
        message: `response time ${(elapsedMs / 1000).toFixed(2)}s exceeds ${threshold / 1000}s`,
        skipRetry: false,
      };
    }
    metrics.tested(channel, !failure);
    if (failure) {
      await health.failed(channel, keyIndex, failure);
      return {
        success: false,
        message: failure.message,
        time: elapsedMs / 1000,
        code: CHANNEL_TEST_FAILED,
        ...(failure.code ? { error_code: failure.code } : {}),
      };
    }
    await this.#log(channel, model, format, outcome.usage, elapsedMs);
    // A multi-key channel recovers key by key: the tested key (and the channel with it), not the keys never tried.
    const multiKey = channel.keys.length > 1;
    if (channel.status === CHANNEL_STATUS.autoDisabled || (multiKey && chosen !== undefined))
      await health.recovered(channel, multiKey ? keyIndex : undefined);
    return { success: true, message: '', time: elapsedMs / 1000 };
  }

  /**
   * Starts testing every channel not disabled by hand, one at a time, in the background (new-api's
   * GET /api/channel/test). Refused while a run is going on this pod.
   */
  startAll(): Promise<void> {
    if (this.#runningAll) throw new AppError(CHANNEL_ERRORS.CHANNEL_TEST_RUNNING);
    const run = this.#testAll().finally(() => {
      this.#runningAll = undefined;
    });
    this.#runningAll = run;
    return run;
  }

  /** Waits for a test-all run in progress, for a clean shutdown. */
  async close(): Promise<void> {
    await this.#runningAll?.catch(() => {});
  }

  async #testAll(): Promise<void> {
    const { channels, logger } = this.#deps;
    const ids = await channels.idsToTest();
    let failed = 0;
    for (const id of ids) {
      try {
        const result = await this.test(id, { enforceThreshold: true });
        if (!result.success) failed++;
      } catch (error) {
        // Untestable types and channels deleted meanwhile: skipped.
        if (!(error instanceof AppError)) logger.warn({ err: error, channel: id }, 'channel test failed to run');
      }
    }
    logger.info({ tested: ids.length, failed }, 'channel test run finished');
  }

  /** A channel the routing index has not loaded yet (created a moment ago on another pod). */
  async #loaded(id: number): Promise<ChannelSnapshot> {
    await this.#deps.channels.get(id);
    await this.#deps.routing.reload([id]);
    const channel = this.#deps.routing.channel(id);
    if (!channel) throw new AppError(CHANNEL_ERRORS.CHANNEL_NOT_FOUND);
    return channel;
  }

  async #call(
    channel: ChannelSnapshot,
    keyIndex: number,
    model: string,
    format: WireFormat,
    stream: boolean,
  ): Promise<{ failure?: ChannelFailure; usage?: Usage }> {
    const key = channel.keys[keyIndex] ?? '';
    if (format === 'openai-realtime') {
      const mapping = resolveModelMapping(model, channel.modelMapping);
      if (!mapping.ok) return { failure: configurationFailure(mapping.error) };
      if (!servesRealtime(channel.type)) {
        const message = `channel type ${channel.type} cannot serve ${format} requests`;
        return { failure: { status: 400, code: 'format_unsupported', message, skipRetry: true } };
      }
      const failure = await probeRealtime(channel, key, mapping.upstreamModel, this.#deps.timeoutMs);
      return failure ? { failure } : {};
    }
    // The test request is written in OpenAI's format and prepared as the relay prepares a client's.
    let prepared: PreparedUpstream;
    try {
      prepared = prepareUpstream(upstreamTarget(channel, format, model, this.#deps.options), {
        channel,
        key,
        format,
        body: testBody(format, model, stream),
        model,
        stream,
        options: this.#deps.options,
        clientHeaders: {},
        requestPath: TEST_PATHS[format] ?? '',
        retryIndex: 0,
        channelTest: true,
      });
    } catch (error) {
      // The channel's configuration cannot make this request (no such format, a bad mapping or override).
      if (!(error instanceof AppError)) throw error;
      return { failure: configurationFailure(error) };
    }
    const exchange = new Exchange({
      channel,
      keyIndex,
      key,
      prepared,
      transport: this.#deps.transport,
      startedMs: Date.now(),
      signal: AbortSignal.timeout(this.#deps.timeoutMs),
      client: { format, model, stream, wantsStreamUsage: true, pingIntervalMs: 0 },
    });
    try {
      const outcome = await exchange.run(discardingSink());
      // A stream its upstream broke off or let stall was ended early: the channel failed its test.
      if (outcome.ending) {
        const { status, code, message } = STREAM_ENDINGS[outcome.ending];
        return { failure: { status, code, message, skipRetry: false } };
      }
      return { usage: outcome.usage };
    } catch (error) {
      return { failure: this.#failure(error) };
    }
  }

  /** What a failed exchange tells the test: the upstream's error (status mapped as the relay maps it), or why none came. */
  #failure(error: unknown): ChannelFailure {
    // An error answer: as the relay reads it. Otherwise the call or the read went wrong.
    if (error instanceof UpstreamFailure && error.cause === undefined) {
      const { status, code, message } = error.error;
      return { status, code, message, skipRetry: false };
    }
    const cause = error instanceof UpstreamFailure || error instanceof StreamBroken ? error.cause : error;
    if (isTimeout(cause)) {
      return {
        status: 504,
        code: 'upstream_timeout',
        message: `the upstream did not answer within ${this.#deps.timeoutMs / 1000}s`,
        skipRetry: false,
      };
    }
    return {
      status: 502,
      code: 'upstream_error',
      message: `the upstream answer could not be read: ${cause instanceof Error ? cause.message : String(cause)}`,
      skipRetry: false,
    };
  }

  /**
   * The test's log: user 1, token "模型测试", quota 0, the would-be cost in the content. Its `other` carries
   * the prices it was reckoned with, like every consume log: new-api's log view computes prices from them
   * (and showed "$NaN" without them).
   */
  async #log(
    channel: ChannelSnapshot,
    model: string,
    format: WireFormat,
    usage: Usage | undefined,
    elapsedMs: number,
  ): Promise<void> {
    const { options, pricing, recorder } = this.#deps;
    const billed = usage ?? { promptTokens: 0, completionTokens: 0 };
    // Priced as the relay prices a default-group request; an unpriced model gets the unset ratio.
    const price = resolvePrice({
      model,
      usingGroup: 'default',
      userGroup: 'default',
      maps: pricing.maps(),
      options,
      acceptUnset: true,
    });
    let cost = 0;
    try {
      cost = settleQuota({ price, usage: billed, options, semantics: 'openai', model }).quota;
    } catch {
      // A price the settlement cannot apply still tests; it just has no cost to report.
    }
    const username = await this.#deps.usernameOf(TEST_LOG_USER_ID).catch(() => '');
    recorder.recordConsume({
      userId: TEST_LOG_USER_ID,
      username,
      tokenId: 0,
      tokenName: '模型测试',
      channelId: channel.id,
      channelName: channel.name,
      modelName: model,
      group: 'default',
      useTimeSeconds: Math.round(elapsedMs / 1000),
      isStream: false,
      ip: '',
      requestId: '',
      content: `模型测试（${format}），不计费；按价格应计 ${cost}`,
      quota: 0,
      promptTokens: billed.promptTokens,
      completionTokens: billed.completionTokens,
      other: buildConsumeOther({
        price,
        usage: billed,
        firstResponseMs: Math.round(elapsedMs),
        requestedModel: model,
        upstreamModel: model,
        usedChannels: [channel.id],
      }),
    });
  }
}

/** A test the channel's own configuration failed before anything was sent: as the relay counts it, no retry helps. */
function configurationFailure(error: AppError): ChannelFailure {
  return { status: error.status, code: error.code, message: error.message, skipRetry: true };
}

/** The endpoint a test speaks: the one asked for, else guessed from the model's name (Realtime only where the type serves it). */
function endpointFormat(endpointType: string | undefined, model: string, realtime: boolean): WireFormat {
  if (endpointType) {
    const format = ENDPOINTS[endpointType];
    if (!format) {
      throw new AppError(CHANNEL_ERRORS.CHANNEL_TEST_ENDPOINT_INVALID, {
        endpoint: endpointType,
        allowed: Object.keys(ENDPOINTS).join(', '),
      });
    }
    return format;
  }
  const m = model.toLowerCase();
  if (m.includes('rerank')) return 'rerank';
  if (m.includes('embedding') || m.includes('embed') || m.startsWith('bge-') || m.startsWith('m3e')) {
    return 'openai-embeddings';
  }
  if (m.startsWith('dall-e') || m.startsWith('gpt-image') || m.includes('seedream')) return 'openai-images';
  if (m.includes('codex')) return 'openai-responses';
  if (realtime && m.includes('realtime')) return 'openai-realtime';
  return 'openai-chat';
}

/** The smallest meaningful request of each kind. */
function testBody(format: WireFormat, model: string, stream: boolean): Record<string, unknown> {
  switch (format) {
    case 'openai-responses':
      return { model, input: 'hi', stream };
    case 'openai-embeddings':
      return { model, input: 'hi' };
    case 'openai-images':
      return { model, prompt: 'a white dot', n: 1 };
    case 'rerank':
      return { model, query: 'hi', documents: ['hi'] };
    default:
      return {
        model,
        messages: [{ role: 'user', content: 'hi' }],
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      };
  }
}

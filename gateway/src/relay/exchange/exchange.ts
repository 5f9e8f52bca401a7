import { estimateCompletionTokens } from '../../domain/billing/index.ts';
import {
  type ConvertContext,
  convertResponse,
  convertStream,
  responseInHub,
  type StreamConverter,
} from '../convert/index.ts';
import { imagesListed } from '../images-listed.ts';
import { isTimeout } from '../outcome.ts';
import type { StreamBudget } from '../overrun/index.ts';
import { type StreamDecoder, sendUpstream, sendUpstreamWhole, streamDecoderFor } from '../protocols/index.ts';
import { mapStatusCode } from '../routing/retry.ts';
import { jsonEvent, parsedData, type SseEvent } from '../sse.ts';
import type { Transport, UpstreamResponse } from '../transport.ts';
import type { ChannelSnapshot, Usage, WireFormat } from '../types.ts';
import { bodyText, type WholeAnswer, wholeOf } from '../whole-answer.ts';
import { ClientGone, StreamBroken, UpstreamFailure } from './failure.ts';
import { forwardStream } from './forward.ts';
import type { PreparedUpstream } from './prepare.ts';
import type { ClientSink } from './sink.ts';
import { StreamEnding, type StreamEndReason } from './stream-ending.ts';

/** What the client asked for, as far as the answer's shape goes. */
export interface ClientWishes {
  format: WireFormat;
  /** The model the client asked for (a synthesised usage chunk names it). */
  model: string;
  stream: boolean;
  /** The client asked for the stream's usage chunk (or did not say): false only when it said no. */
  wantsStreamUsage: boolean;
  /** `: PING` lines while the upstream is silent this long; 0: none. */
  pingIntervalMs: number;
  /** Upstream chunks that may wait for a slow client before the upstream is no longer read (forward.ts); absent: 0. */
  streamQueueLength?: number;
  /**
   * Prompt tokens for the usage chunk an OpenAI chat stream gets when its upstream sent none; absent:
   * no such chunk (the channel tester reads usage, it does not need one made up).
   */
  promptEstimate?: () => number;
  /** Aborted when this pod's drain timeout runs out: an open stream is ended with `draining` (stream-ending.ts). */
  draining?: AbortSignal;
  /** Told why the gateway ended the stream early, before the stream's end goes out (the request's outcome). */
  onEnding?: (reason: StreamEndReason) => void;
}

/** One attempt on one channel: the picked key, the prepared request, and who the answer is for. */
export interface ExchangeSpec {
  channel: ChannelSnapshot;
  keyIndex: number;
  key: string;
  prepared: PreparedUpstream;
  client: ClientWishes;
  transport: Transport;
  /** When the request started (Date.now()), for the time to the first token. */
  startedMs: number;
  /** Ends the call early (the channel tester's time limit). */
  signal?: AbortSignal;
  /** Meters a stream against its request's quota, cutting it when the quota runs out (relay/overrun). */
  budget?: StreamBudget;
}

/** What an answered attempt produced. */
export interface ExchangeOutcome {
  upstreamFormat: WireFormat;
  upstreamModel: string;
  usage: Usage | undefined;
  /** The generated text, for estimating usage when the upstream reported none (read only then). */
  text(): string;
  toolCalls: number;
  firstTokenMs: number | undefined;
  clientGone: boolean;
  /** Why the gateway ended the stream before its upstream finished it (billed for what was delivered). */
  ending: StreamEndReason | undefined;
  /** Images an image answer lists (its `data`): what a per-image price bills, whatever `n` asked for. */
  images?: number;
}

/**
 * One exchange with an upstream, for the relay and the channel tester alike: sends the prepared
 * request, reads the whole answer or the stream, converts it to the client's format, meters its
 * usage, and writes it to a sink. An error answer (its status through the channel's
 * status_code_mapping) or an unreachable upstream is thrown as an UpstreamFailure before anything
 * is written (a whole answer whose body breaks off too: 502, or 504 when a wait ran out); a stream the
 * upstream breaks off or stalls is ended in the client's format (forward.ts); a failure of ours mid-stream
 * is thrown as StreamBroken after the sink is cut off. A client that leaves at any time aborts the
 * upstream call at once; before anything was written that is thrown as ClientGone.
 */
export class Exchange {
  readonly #spec: ExchangeSpec;

  constructor(spec: ExchangeSpec) {
    this.#spec = spec;
  }

  async run(sink: ClientSink): Promise<ExchangeOutcome> {
    // Made before the call: a client that leaves at any time aborts it, headers or not.
    const abort = new AbortController();
    const stopListening = sink.onGone(() => abort.abort());
    try {
      if (!this.#spec.client.stream) {
        const answer = await this.#sendWhole(abort.signal);
        if (answer.status >= 400) throw await this.#failure(answer);
        return await this.#whole(answer, sink, abort.signal);
      }
      const response = await this.#send(abort.signal);
      if (response.status >= 400) throw await this.#failure(wholeOf(response));
      const contentType = String(response.headers['content-type'] ?? '');
      const decoder = streamDecoderFor(this.#spec.prepared.provider, contentType);
      return decoder
        ? await this.#stream(response, decoder, sink, abort)
        : await this.#whole(wholeOf(response), sink, abort.signal);
    } finally {
      stopListening();
    }
  }

  /** The call's signal: `abort` (the client left) or the spec's signal. */
  #signal(abort: AbortSignal): AbortSignal {
    return this.#spec.signal ? AbortSignal.any([abort, this.#spec.signal]) : abort;
  }

  /** A streaming call. */
  async #send(abort: AbortSignal): Promise<UpstreamResponse> {
    const { prepared, channel, key, transport } = this.#spec;
    try {
      return await sendUpstream(prepared.provider, prepared.request, {
        channel,
        key,
        transport,
        signal: this.#signal(abort),
        stream: true,
      });
    } catch (error) {
      throw this.#unreachable(error, abort);
    }
  }

  /** A non-streaming call, read whole. */
  async #sendWhole(abort: AbortSignal): Promise<WholeAnswer> {
    const { prepared, channel, key, transport } = this.#spec;
    try {
      return await sendUpstreamWhole(prepared.provider, prepared.request, {
        channel,
        key,
        transport,
        signal: this.#signal(abort),
        stream: false,
      });
    } catch (error) {
      throw this.#unreachable(error, abort);
    }
  }

  /** A call that failed before its headers: 504 when a wait ran out, else 502; the client's leaving is no failure. */
  #unreachable(error: unknown, abort: AbortSignal): UpstreamFailure | ClientGone {
    if (abort.aborted) return new ClientGone(error);
    const { channel, keyIndex } = this.#spec;
    const timedOut = isTimeout(error);
    return new UpstreamFailure(
      {
        status: timedOut ? 504 : 502,
        message: timedOut
          ? 'the upstream did not answer in time'
          : `upstream unreachable: ${error instanceof Error ? error.message : String(error)}`,
        type: 'upstream_error',
        code: timedOut ? 'upstream_timeout' : 'upstream_unreachable',
      },
      channel,
      keyIndex,
      error,
    );
  }

  /** A whole answer's body that broke off after its headers: 504 when a wait ran out, else 502. */
  async #read(answer: WholeAnswer, abort: AbortSignal): Promise<Buffer> {
    try {
      return await answer.bytes();
    } catch (error) {
      if (abort.aborted) throw new ClientGone(error);
      const reason: StreamEndReason = isTimeout(error) ? 'upstream_timeout' : 'upstream_reset';
      throw new UpstreamFailure(
        {
          status: reason === 'upstream_timeout' ? 504 : 502,
          message:
            reason === 'upstream_timeout'
              ? 'the upstream stopped sending its answer'
              : 'the upstream connection broke off mid-answer',
          type: 'upstream_error',
          code: reason,
        },
        this.#spec.channel,
        this.#spec.keyIndex,
        error,
      );
    }
  }

  async #failure(answer: WholeAnswer): Promise<UpstreamFailure> {
    const { prepared, channel, keyIndex } = this.#spec;
    const text = await answer.bytes().then(bodyText, () => '');
    const parsed = prepared.provider.parseError(answer.status, text);
    return new UpstreamFailure(
      { ...parsed, status: mapStatusCode(parsed.status, channel.statusCodeMapping) },
      channel,
      keyIndex,
    );
  }

  /** A whole answer: small enough to read at once (chat, embeddings, images); binary ones (speech) pass through. */
  async #whole(answer: WholeAnswer, sink: ClientSink, abort: AbortSignal): Promise<ExchangeOutcome> {
    const { prepared, client, channel, keyIndex } = this.#spec;
    const { provider, upstreamFormat, convert } = prepared;
    const contentType = String(answer.headers['content-type'] ?? '');
    const read = await this.#read(answer, abort);
    let bytes: Uint8Array = read;
    let usage: Usage | undefined;
    let text = () => '';
    let images: number | undefined;
    let type = contentType || 'application/octet-stream';
    if (contentType.includes('application/json')) {
      let parsed: Record<string, any>;
      try {
        parsed = JSON.parse(read.toString('utf8')) as Record<string, any>;
      } catch {
        throw new UpstreamFailure(
          {
            status: 502,
            message: 'the upstream answered invalid JSON',
            type: 'upstream_error',
            code: 'bad_response_body',
          },
          channel,
          keyIndex,
        );
      }
      usage = provider.usageFromBody(upstreamFormat, parsed);
      text = () => answerText(responseInHub(upstreamFormat, parsed, convert));
      let answered: unknown = parsed;
      if (upstreamFormat !== client.format) {
        answered = convertResponse(upstreamFormat, client.format, parsed, convert);
        bytes = Buffer.from(JSON.stringify(answered));
        type = 'application/json';
      }
      images = imagesListed(client.format, answered);
    }
    await sink.answer(answer.status, type, bytes);
    return {
      upstreamFormat,
      upstreamModel: prepared.upstreamModel,
      usage,
      text,
      toolCalls: 0,
      firstTokenMs: Date.now() - this.#spec.startedMs,
      clientGone: false,
      ending: undefined,
      images,
    };
  }

  async #stream(
    response: UpstreamResponse,
    decoder: StreamDecoder,
    sink: ClientSink,
    abort: AbortController,
  ): Promise<ExchangeOutcome> {
    const { prepared, client, startedMs, budget } = this.#spec;
    const { provider, upstreamFormat, convert } = prepared;
    const observer = provider.streamObserver(upstreamFormat);
    const converter = convertStream(upstreamFormat, client.format, convert);
    const shape = clientShaping(client, convert);
    sink.open({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let firstTokenMs: number | undefined;
    const result = await forwardStream(response.body, decoder, sink, observer, () => abort.abort(), {
      pingIntervalMs: client.pingIntervalMs,
      queueLength: client.streamQueueLength ?? 0,
      onFirstEvent: () => {
        firstTokenMs = Date.now() - startedMs;
      },
      transform: shape.transform(converter),
      finish: () => shape.finish(converter ? converter.end() : [], observer),
      check: budget?.follow(observer),
      ending: new StreamEnding(client.format),
      draining: client.draining,
    }).catch((error: unknown) => {
      // A failure of ours after the 200 went out: a cut connection is how the client learns it.
      sink.destroy();
      throw new StreamBroken(error);
    });
    if (result.ending) client.onEnding?.(result.ending);
    sink.end();
    return {
      upstreamFormat,
      upstreamModel: prepared.upstreamModel,
      usage: observer.usage,
      text: () => observer.text,
      toolCalls: observer.toolCalls,
      firstTokenMs,
      clientGone: result.clientGone,
      ending: result.ending,
    };
  }
}

/**
 * What an OpenAI client gets besides the converted events: [DONE] held back and sent last, so that
 * a synthesised usage chunk can come before it; the usage chunk asked for on its behalf dropped if
 * it declined it. Other clients get the events as they are.
 */
function clientShaping(client: ClientWishes, ctx: ConvertContext) {
  const openAIClient = client.format === 'openai-chat' || client.format === 'openai-completions';
  const dropUsage = client.format === 'openai-chat' && !client.wantsStreamUsage;
  const keep = (e: SseEvent) => e.data !== '[DONE]' && !(dropUsage && isUsageOnlyChunk(e));
  const forClient = (events: SseEvent[]) => (openAIClient ? events.filter(keep) : events);
  return {
    /** Undefined when every event goes out as it came (pass-through to a non-OpenAI client). */
    transform: (converter: StreamConverter | undefined): ((event: SseEvent, out: SseEvent[]) => void) | undefined => {
      if (converter) {
        return (event, out) => {
          for (const next of converter.push(event)) if (!openAIClient || keep(next)) out.push(next);
        };
      }
      if (!openAIClient) return undefined;
      return (event, out) => {
        if (keep(event)) out.push(event);
      };
    },
    finish: (closing: SseEvent[], metered: { usage: Usage | undefined; text: string; toolCalls: number }) => {
      const events = forClient(closing);
      if (!openAIClient) return events;
      if (client.format === 'openai-chat' && client.wantsStreamUsage && !metered.usage && client.promptEstimate) {
        events.push(jsonEvent(estimatedUsageChunk(ctx.model, client.promptEstimate(), metered)));
      }
      events.push({ data: '[DONE]' });
      return events;
    },
  };
}

/** The usage chunk an upstream did not send, with locally counted tokens (reference Appendix B). */
function estimatedUsageChunk(model: string, prompt: number, metered: { text: string; toolCalls: number }) {
  const completion = estimateCompletionTokens(model, metered.text, metered.toolCalls);
  return {
    id: 'chatcmpl-tollgate-usage',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** An OpenAI chunk carrying only usage: read from the event's parsed data, parsed at most once. */
function isUsageOnlyChunk(event: SseEvent): boolean {
  if (!event.data.includes('"usage"')) return false;
  const chunk = parsedData(event) as { choices?: unknown[]; usage?: unknown } | null | undefined;
  return (
    typeof chunk === 'object' &&
    chunk !== null &&
    Array.isArray(chunk.choices) &&
    chunk.choices.length === 0 &&
    chunk.usage !== undefined
  );
}

/** The generated text of a whole answer, for estimating usage when the upstream reports none. */
function answerText(body: Record<string, any>): string {
  const choices = Array.isArray(body.choices) ? body.choices : [];
  return choices
    .map((c: any) => c?.message?.content ?? c?.text ?? '')
    .filter((t: unknown) => typeof t === 'string')
    .join('');
}

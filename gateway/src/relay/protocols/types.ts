import type { IncomingHttpHeaders } from 'node:http';
import type { OptionsService } from '../../domain/options/index.ts';
import type { Json } from '../convert/types.ts';
import type { SseEvent } from '../sse.ts';
import type { Transport, UpstreamResponse } from '../transport.ts';
import type { ChannelSnapshot, Usage, WireFormat } from '../types.ts';
import type { VideoTasks } from './video-tasks.ts';

/** An HTTP request to an upstream, ready for the transport. */
export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | FormData | Uint8Array;
  /**
   * The body asks the upstream to answer as a stream whatever the client asked for (a Dify agent app
   * only streams): set by buildRequest from the body's object, for a send that reads such a stream whole.
   */
  asksForStream?: boolean;
}

/** What an upstream said went wrong, in a provider-neutral form. */
export interface UpstreamError {
  status: number;
  message: string;
  type: string;
  code: string | null;
}

/** Watches a stream go by: usage when the upstream reports it, text for estimating it when it does not. */
export interface StreamObserver {
  /** Called for every event before it is forwarded. */
  observe(event: SseEvent): void;
  readonly usage: Usage | undefined;
  /** The generated text so far, for estimating completion tokens. */
  readonly text: string;
  readonly toolCalls: number;
}

/** What a provider may read while finishing a request. */
export interface ProviderContext {
  channel: ChannelSnapshot;
  /** The model the client asked for. */
  model: string;
  /** The model to send upstream, after the channel's mapping. */
  upstreamModel: string;
  stream: boolean;
  options: OptionsService;
  /** The client's request headers (anthropic-version, anthropic-beta, … pass through). */
  clientHeaders: IncomingHttpHeaders;
  /** The Tollgate user making the request (app upstreams keep conversations per user); absent in channel tests. */
  userId?: number;
}

/** What building an upstream request may read. */
export interface BuildInput {
  format: WireFormat;
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  /** Serialised once, finished by the provider's finishBody; the client's bytes in pass-through mode. */
  body: string | Uint8Array | FormData;
  /**
   * The JSON body's object as the channel's param_override left it, before finishBody (which may take
   * out a field that goes elsewhere, as Coze's conversation goes in the query string): a request built
   * from the body's fields reads them here, never by parsing `body` back. Absent for a multipart form.
   */
  json?: Json | undefined;
  stream: boolean;
  options: OptionsService;
  clientHeaders: IncomingHttpHeaders;
}

/** What authorizing a built request may read. */
export interface AuthorizeInput {
  channel: ChannelSnapshot;
  key: string;
  /** For fetching a credential (an OAuth access token) through the same connection pool. */
  transport: Transport;
}

/** What listing an upstream's models may read: the channel's host settings, its key, the connections. */
export interface ListModelsInput {
  channel: Pick<ChannelSnapshot, 'baseUrl' | 'other'>;
  key: string;
  transport: Transport;
  /** The longest wait for each upstream answer. */
  timeoutMs: number;
}

/** What sending may use besides the request. */
export interface SendInput {
  transport: Transport;
  signal: AbortSignal;
  stream: boolean;
  /**
   * The channel and key the request is for (the relay always passes them): for an exchange that
   * authorizes again mid-way (Baidu refetches an expired access token) or checks the key first.
   */
  channel?: ChannelSnapshot;
  key?: string;
}

/**
 * Reads an upstream's streamed body, chunk by chunk as it arrives, as events of the native format
 * (the SSE parser for SSE upstreams; binary framings and other transports decode to the same events).
 */
export interface StreamDecoder {
  push(chunk: Uint8Array): SseEvent[];
  end(): SseEvent[];
  /**
   * True when the events of the last push, framed as the upstream framed them, are exactly that
   * chunk's bytes (nothing carried in or left over, nothing skipped): a stream passing them all
   * through unchanged can then forward the chunk itself.
   */
  readonly exact?: boolean;
}

/**
 * One upstream protocol: one folder under relay/protocols/ with the same few files (request,
 * stream, usage, errors, and the format conversion where it has a format of its own). A provider builds
 * the request for a body already in its native format, and reads usage and errors from the answer;
 * converting between formats is the converters' job (relay/convert), not the provider's.
 */
export interface Provider {
  readonly name: string;
  /** Formats this provider speaks natively; anything else must be converted first. */
  readonly formats: ReadonlySet<WireFormat>;
  /**
   * The native format to speak upstream for a client request in `format`: the format itself when
   * native, else one it converts to (e.g. Anthropic: openai-chat → claude-messages); undefined when
   * this provider cannot serve that kind of request at all. Protocols that host several model
   * families (Bedrock, Vertex) answer per model: Claude models natively, others in their own format.
   */
  nativeFormat(format: WireFormat, upstreamModel?: string): WireFormat | undefined;
  /**
   * Finishes a JSON body already in the native `format` before it is sent: where the model goes,
   * the provider's defaults and adapters (default max_tokens, thinking from a model suffix, safety
   * settings). May change the upstream model (a `-thinking` suffix is a setting, not a model).
   */
  prepareBody(format: WireFormat, body: Json, context: ProviderContext): { body: Json; upstreamModel: string };
  /**
   * The body's last change before it is serialised, after the channel's param_override: a strict
   * upstream's field list, a field that goes in the URL rather than the body (Coze), the key's app id
   * (Xunfei). Done on the object so that the body is serialised once. Absent: none.
   */
  finishBody?(format: WireFormat, body: Json, channel: ChannelSnapshot, key: string): Json;
  /** The upstream request: URL, auth (keys parsed, requests signed, tokens fetched) and body. */
  buildRequest(input: BuildInput): UpstreamRequest;
  /**
   * Finishes a request's credentials once its headers are final (after the channel's header
   * override): signs it (SigV4, TC3) or adds an access token fetched and cached (Vertex, Baidu).
   * Absent: buildRequest already put the key where it goes.
   */
  authorize?(request: UpstreamRequest, input: AuthorizeInput): Promise<UpstreamRequest>;
  /**
   * Sends a request when one HTTP call is not the whole exchange (a job to create and then poll, a
   * WebSocket session); the answer looks like an HTTP response either way. Absent: the transport sends it.
   */
  send?(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse>;
  /**
   * The decoder of a streamed answer with this content type; undefined when the answer is not a stream
   * this protocol reads (then it is read whole). Absent: `text/event-stream` answers are SSE.
   */
  streamDecoder?(contentType: string): StreamDecoder | undefined;
  /**
   * The upstream's own token count for a Claude Messages body (Anthropic's `/v1/messages/count_tokens`);
   * absent where the protocol has none, and the relay counts locally.
   */
  buildCountTokensRequest?(input: {
    channel: ChannelSnapshot;
    key: string;
    upstreamModel: string;
    body: string;
    options: OptionsService;
    clientHeaders: IncomingHttpHeaders;
  }): UpstreamRequest;
  /**
   * The upstream's own model list, for a type whose listing needs the protocol's auth (SigV4, an
   * OAuth token); failures are the channel service's AppErrors (relay/protocols/model-listing.ts).
   * Absent: the type lists its models by plain HTTP, or not at all.
   */
  listModels?(input: ListModelsInput): Promise<string[]>;
  usageFromBody(format: WireFormat, body: unknown): Usage | undefined;
  streamObserver(format: WireFormat): StreamObserver;
  parseError(status: number, text: string): UpstreamError;
  /** The protocol's video generation tasks (relay/tasks/video); absent where the upstream makes no videos. */
  readonly video?: VideoTasks;
}

import type { SseEvent } from '../sse.ts';
import type { WireFormat } from '../types.ts';

/** A parsed JSON body. Converters read untrusted input: every field may be missing or of any type. */
export type Json = Record<string, any>;

/**
 * Format conversion (issue 6, reference Appendix B): every chat-like format converts to and from
 * OpenAI chat completions, the hub; embeddings formats to and from OpenAI embeddings. A conversion
 * between two other formats goes through the hub (Claude → OpenAI chat → Gemini).
 *
 * What the hub carries beyond OpenAI's documented chat fields, so that nothing is lost on the way:
 * - `reasoning_content` on messages and deltas (thinking text, as DeepSeek and others send it), and
 *   `reasoning_signature` (Claude's thinking signature / Gemini's thought signature) beside it;
 * - usage: `prompt_tokens` counts every input token (cache included), with
 *   `prompt_tokens_details.cached_tokens` (cache reads) and `prompt_tokens_details.cache_creation_tokens`
 *   (cache writes; `cache_creation_1h_tokens` of them with a one-hour TTL);
 * - finish_reason: `stop`, `length`, `tool_calls`, `content_filter`.
 */

/** What a conversion may need besides the body. */
export interface ConvertContext {
  /** The model the client asked for (answers name it, as the client expects). */
  model: string;
  /** The model sent upstream after mapping. */
  upstreamModel: string;
  /** Whether the client asked for a stream. */
  stream: boolean;
}

/** Converts a stream event by event: nothing is buffered beyond what one output event needs. */
export interface StreamConverter {
  /** The events to send for one input event (zero or more). */
  push(event: SseEvent): SseEvent[];
  /** Closing events once the input stream has ended (e.g. Claude's message_stop), if not sent yet. */
  end(): SseEvent[];
}

/** An error as every format can render it. */
export interface RelayErrorInfo {
  status: number;
  message: string;
  /** OpenAI-style error type (invalid_request_error, authentication_error, rate_limit_error, …). */
  type: string;
  code: string | null;
}

/** Conversions between one wire format and its hub format. */
export interface FormatAdapter {
  /** The format this adapter speaks. */
  readonly format: WireFormat;
  /** The hub it converts to and from: `openai-chat` for chat-like formats, `openai-embeddings` for embeddings. */
  readonly hub: WireFormat;
  /** A request in this format → a hub request (the model stays as it was). */
  requestToHub(body: Json, ctx: ConvertContext): Json;
  /** A hub request → a request in this format, for an upstream that speaks it. */
  requestFromHub(body: Json, ctx: ConvertContext): Json;
  /** A whole answer in this format → a hub answer. */
  responseToHub(body: Json, ctx: ConvertContext): Json;
  /** A hub answer → a whole answer in this format, for the client. */
  responseFromHub(body: Json, ctx: ConvertContext): Json;
  /** A stream in this format → hub stream events (OpenAI chat chunks, no [DONE]). */
  streamToHub(ctx: ConvertContext): StreamConverter;
  /** Hub stream events (OpenAI chat chunks) → a stream in this format, with its own ending. */
  streamFromHub(ctx: ConvertContext): StreamConverter;
  /** An error body in this format, as its clients parse errors. */
  errorBody(error: RelayErrorInfo): Json;
}

/**
 * Conversions for a format only an upstream speaks (Bedrock Converse, Cohere chat, …): no client
 * sends it, so only the directions from the hub to the upstream and back are needed.
 */
export type UpstreamAdapter = Pick<
  FormatAdapter,
  'format' | 'hub' | 'requestFromHub' | 'responseToHub' | 'streamToHub'
> &
  Partial<FormatAdapter>;

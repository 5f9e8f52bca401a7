import type { SseEvent } from '../sse.ts';
import type { ChannelSnapshot, Usage, WireFormat } from '../types.ts';

/** An HTTP request to an upstream, ready for the transport. */
export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | FormData | Uint8Array;
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

/**
 * One upstream protocol (DESIGN.md §7: one folder per provider, same few files). A provider builds
 * the request for a body already in its native format, and reads usage and errors from the answer;
 * converting between formats is the converters' job, not the provider's.
 */
export interface Provider {
  readonly name: string;
  /** Formats this provider speaks natively; anything else must be converted first. */
  readonly formats: ReadonlySet<WireFormat>;
  buildRequest(input: {
    format: WireFormat;
    channel: ChannelSnapshot;
    key: string;
    upstreamModel: string;
    body: string | FormData;
    stream: boolean;
  }): UpstreamRequest;
  usageFromBody(format: WireFormat, body: unknown): Usage | undefined;
  streamObserver(format: WireFormat): StreamObserver;
  parseError(status: number, text: string): UpstreamError;
}

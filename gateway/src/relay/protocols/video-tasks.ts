import type { UpstreamResponse } from '../transport.ts';
import type { ChannelSnapshot } from '../types.ts';
import type { AuthorizeInput, SendInput, UpstreamRequest } from './types.ts';
import { isRecord } from './video-fields.ts';

/**
 * A protocol's video generation API, for the task routes (relay/tasks/video): how a submission is
 * checked and priced, sent, and then asked after until it ends. Each vendor's wire shapes and auth
 * stay in its protocol folder; the routes, billing and polling are shared.
 */

/** A video submission in the gateway's terms, whichever route it came through. */
export interface VideoJob {
  /** The model the client asked for (priced, logged). */
  model: string;
  /** The model the upstream is sent, after the channel's mapping. */
  upstreamModel: string;
  prompt: string;
  /**
   * The submission's fields: the OpenAI Videos API's (seconds, size, input_reference), new-api's
   * generic video API's (duration, width, height, image, images, metadata), or a vendor route's own
   * body (the Kling route's fields as Kling names them).
   */
  fields: Record<string, unknown>;
  /** The multipart form when the client sent one (a reference image as a file). */
  form?: FormData;
  /** GENERATE for text, or the route's own action name (TEXT2VIDEO, IMAGE2VIDEO, REMIX). */
  action: string;
}

/** What a submission costs besides its per-call price, and what its video object shows. */
export interface VideoPlan {
  /**
   * The task's own ratios multiplied into the per-call price (seconds, size, resolution), echoed to
   * the client in `X-New-Api-Other-Ratios` and kept in the consume log.
   */
  ratios: Record<string, number>;
  /** The clip length in seconds, as the video object shows it. */
  seconds: string;
  /** The frame size (`WxH`) or resolution the vendor renders at. */
  size: string;
  /**
   * The action the task is kept under when the vendor's differs from the route's: Kling makes a
   * generic GENERATE a TEXT2VIDEO or an IMAGE2VIDEO, whose endpoint its status queries must use.
   */
  action?: string;
}

export type VideoStatus = 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

/** A task's state as the upstream reports it, in the gateway's statuses. */
export interface VideoState {
  status: VideoStatus;
  /** `0%` … `100%`. */
  progress: string;
  /** Why it failed; empty otherwise. */
  failReason: string;
  /** The finished video's address where the vendor gives one; the content route fetches it for the owner. */
  url?: string;
  /** The vendor's id of the finished file where its address takes one more call (`fileUrl`). */
  file?: string;
  /**
   * The tokens the finished video used, where the vendor reports them (Seedance's `usage.total_tokens`):
   * a task priced by model ratio is settled by them once it succeeds (relay/tasks/video/platform.ts).
   */
  totalTokens?: number;
}

/** The upstream took the task: its own id and first state. */
export interface VideoAccepted {
  id: string;
  state: VideoState;
}

/** The upstream refused the task (nothing is charged): passed on with its status and message. */
export interface VideoRefusal {
  refused: true;
  status: number;
  code: string;
  message: string;
}

/** Which task a query is for, as the row keeps it. */
export interface VideoTaskRef {
  upstreamId: string;
  upstreamModel: string;
  action: string;
  /** The finished video's address from its state, kept without credentials (what `content` may fetch with them). */
  url?: string;
}

/** A finished video's bytes, read out of an answer that carries them inside a document. */
export interface VideoBytes {
  type: string;
  bytes: Buffer;
}

export interface VideoTasks {
  /**
   * Checks the job's fields the way the vendor would and prices them; a message (answered 400,
   * nothing charged) when the vendor would refuse them.
   */
  plan(job: VideoJob): VideoPlan | string;
  /** The submission, authorized (Bearer key, JWT, signature) and in the vendor's shape. */
  submit(channel: ChannelSnapshot, key: string, job: VideoJob, plan: VideoPlan): Promise<UpstreamRequest>;
  /** Reads the upstream's answer to a submission. */
  accepted(status: number, body: string): VideoAccepted | VideoRefusal;
  /** The status query for one task. */
  query(channel: ChannelSnapshot, key: string, task: VideoTaskRef): Promise<UpstreamRequest>;
  /** Reads the answer to a status query; undefined when it is not one (the task is left as it is). */
  state(status: number, body: string): VideoState | undefined;
  /**
   * The request for a finished video's bytes where the vendor serves them itself (Sora's content
   * endpoint, with a variant; Gemini's file URI, with the key); absent: the content is fetched from
   * the state's `url`. Undefined when the vendor has no such variant.
   */
  content?(
    channel: ChannelSnapshot,
    key: string,
    task: VideoTaskRef,
    variant: string,
  ): Promise<UpstreamRequest | undefined>;
  /**
   * The bytes out of content's answer where it is a document holding them (Vertex's operation, the
   * video base64-encoded), or why there are none; absent: the answer is the bytes themselves.
   */
  contentBytes?(body: string): VideoBytes | string;
  /**
   * Sends the protocol's video requests where a credential must be fetched first (Vertex's OAuth
   * access token); absent: the transport sends them as built.
   */
  send?(request: UpstreamRequest, input: SendInput & AuthorizeInput): Promise<UpstreamResponse>;
  /**
   * Where a finished task names a file instead of an address (MiniMax's file_id): the call that
   * asks the file's download address, and reading its answer (undefined: ask again at the next poll).
   */
  fileUrl?: {
    request(channel: ChannelSnapshot, key: string, file: string): Promise<UpstreamRequest>;
    read(status: number, body: string): string | undefined;
  };
  /** A new video from a finished one (Sora's remix); absent where the vendor has none. */
  remix?(channel: ChannelSnapshot, key: string, task: VideoTaskRef, prompt: string): Promise<UpstreamRequest>;
}

export const isRefusal = (answer: VideoAccepted | VideoRefusal): answer is VideoRefusal => 'refused' in answer;

/** What a vendor's error body says, as its reader finds it there. */
export interface RefusalDetail {
  /** Passed on where it is a non-empty string. */
  code?: unknown;
  /** Passed on where it is a non-empty string. */
  message?: unknown;
  /** The status to answer when the upstream refused with a 2xx (its own code says what kind); else 502. */
  status?: number;
}

/**
 * A refused submission passed on: the upstream's error status (a 2xx that is no acceptance is the
 * upstream's fault, 502), the vendor's code and message as `read` finds them in the body, or
 * `upstream_error` and the status with the start of the body when it has none.
 */
export function refusalOf(
  status: number,
  body: string,
  read: (body: string) => RefusalDetail | undefined,
): VideoRefusal {
  const detail = read(body);
  const { code, message } = detail ?? {};
  return {
    refused: true,
    status: status >= 400 ? status : (detail?.status ?? 502),
    code: typeof code === 'string' && code !== '' ? code : 'upstream_error',
    message:
      typeof message === 'string' && message !== ''
        ? message
        : `upstream answered HTTP ${status}: ${body.slice(0, 300)}`,
  };
}

/** The `error` object of an OpenAI-shaped error body (`{error: {code, message}}`: OpenAI, Ark, Google). */
export function errorObject(body: string): Record<string, unknown> | undefined {
  const error = jsonRecord(body)?.error;
  return isRecord(error) ? error : undefined;
}

/** A JSON POST to a vendor: its auth headers and the JSON content type, the body encoded. */
export const jsonPost = (url: string, headers: Record<string, string>, body: unknown): UpstreamRequest => ({
  url,
  method: 'POST',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A vendor body priced per call (nothing multiplied in): the clip shows its duration and resolution. */
export function perCallPlan(body: { duration: number; resolution: string } | string): VideoPlan | string {
  return typeof body === 'string' ? body : { ratios: {}, seconds: String(body.duration), size: body.resolution };
}

/** A progress figure (0–100, or a `NN%` string) as the percent string tasks keep; SUCCESS is always 100%. */
export function percent(status: VideoStatus, value: unknown): string {
  if (status === 'SUCCESS') return '100%';
  const number = typeof value === 'number' ? value : Number.parseFloat(String(value ?? ''));
  return `${Number.isFinite(number) ? Math.max(0, Math.min(100, Math.round(number))) : 0}%`;
}

/** A JSON body as a record, undefined when it is not one. */
export function jsonRecord(text: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

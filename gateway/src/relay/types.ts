/**
 * Shapes shared across the relay (DESIGN.md §3): what a request is routed to, what an upstream
 * reports it used, and what the bill is computed from. Provider adaptors, converters, billing, the
 * ledger and the usage recorder all speak these.
 */

import type { CompiledExpression } from '../domain/billing/expr/index.ts';

/** The wire formats clients send and upstreams speak. */
export type WireFormat =
  | 'openai-chat'
  | 'openai-completions'
  | 'openai-responses'
  /** `POST /v1/responses/compact`: a conversation compacted into items a later Responses call takes. */
  | 'openai-responses-compact'
  | 'openai-embeddings'
  | 'openai-images'
  | 'openai-image-edits'
  | 'openai-audio-speech'
  | 'openai-audio-transcriptions'
  | 'openai-audio-translations'
  | 'openai-moderations'
  | 'rerank'
  /** `GET /v1/realtime`: an OpenAI Realtime WebSocket session, relayed frame by frame. */
  | 'openai-realtime'
  | 'claude-messages'
  | 'gemini-generate'
  | 'gemini-embed'
  /** Spoken only upstream: Bedrock Converse, Tencent Hunyuan's ChatCompletions, Xunfei Spark's WebSocket frames, Cohere v2. */
  | 'bedrock-converse'
  | 'tencent-chat'
  | 'xunfei-chat'
  | 'cohere-chat'
  | 'cohere-embed'
  | 'cohere-rerank'
  /** Upstream-only: Dify's chat-messages (and workflows/run) app API. */
  | 'dify-chat'
  /** Upstream-only: Coze's v3 chat with a bot. */
  | 'coze-chat'
  /** Upstream-only: a Replicate prediction of a language model, and of an image model. */
  | 'replicate-chat'
  | 'replicate-images'
  /** Upstream-only formats: Baidu ERNIE v1, Zhipu v3, DashScope native, Ollama native. */
  | 'baidu-chat'
  | 'baidu-embeddings'
  | 'zhipu-v3'
  | 'dashscope-rerank'
  | 'dashscope-images'
  | 'ollama-chat'
  | 'ollama-embed'
  /** A midjourney-proxy submission (the /mj routes): passed through, never converted. */
  | 'midjourney'
  /** A Suno API proxy submission (the /suno routes): passed through, never converted. */
  | 'suno'
  /** A video task submission (the /v1/videos routes): passed through, never converted. */
  | 'video';

/**
 * Token usage in one canonical form, whatever the upstream reported.
 * `promptTokens` counts every input token, cached ones included (OpenAI semantics); Claude's input
 * tokens exclude cache, so a Claude adaptor adds cache read/write into promptTokens when normalising.
 */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Input tokens served from the provider's prompt cache (a subset of promptTokens). */
  cachedTokens?: number;
  /** Input tokens written to the prompt cache (a subset of promptTokens); 5-minute TTL unless split below. */
  cacheCreationTokens?: number;
  /** Of cacheCreationTokens, those written with a 1-hour TTL (Claude). */
  cacheCreation1hTokens?: number;
  /** Output tokens spent on reasoning (a subset of completionTokens). */
  reasoningTokens?: number;
  /** Audio / image input and output tokens, subsets of prompt/completion, priced by their own ratios. */
  audioInputTokens?: number;
  audioOutputTokens?: number;
  imageInputTokens?: number;
  /** Paid tool calls during the request (web search, file search). */
  webSearchCalls?: number;
  fileSearchCalls?: number;
  /** True when the numbers were estimated locally because the upstream reported none. */
  estimated?: boolean;
}

/** A channel as the relay needs it, held in memory (never the database row itself). */
export interface ChannelSnapshot {
  id: number;
  type: number;
  name: string;
  status: number;
  baseUrl: string;
  /** Decrypted keys, one or more (multi-key channels). */
  keys: string[];
  multiKeyMode: 'random' | 'polling';
  models: string[];
  groups: string[];
  priority: number;
  weight: number;
  tag: string | null;
  autoBan: boolean;
  /** Parsed JSON settings; absent when empty. */
  modelMapping?: Record<string, string>;
  statusCodeMapping?: Record<string, string>;
  paramOverride?: Record<string, unknown>;
  headerOverride?: Record<string, string>;
  /** Type-specific `other` (Azure API version, …) and the settings objects. */
  other: string;
  setting?: Record<string, unknown>;
  settings?: Record<string, unknown>;
  openaiOrganization: string | null;
  testModel: string | null;
}

/** The price of one model for one request, resolved before the upstream call (reference §5.2). */
export interface ModelPrice {
  /** Pay per call: USD per call; undefined means ratio (per token) billing. */
  perCallUsd?: number;
  modelRatio: number;
  completionRatio: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  imageRatio: number;
  audioRatio: number;
  audioCompletionRatio: number;
  /** The group ratio applied (GroupGroupRatio for the user's group if set, else GroupRatio). */
  groupRatio: number;
  /** Set when GroupGroupRatio supplied the group ratio. */
  userGroupRatio?: number;
  /** False when the model has neither a price nor a ratio configured (default ratio in use). */
  configured: boolean;
  /** Set when the model is in `tiered_expr` mode: its billing expression prices it, not the ratios. */
  expression?: CompiledExpression;
}

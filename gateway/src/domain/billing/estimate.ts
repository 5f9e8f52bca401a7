/**
 * Local token estimates (reference §5.6): prompt tokens before the upstream call, for the quota
 * reservation and for billing when an upstream reports no usage; completion tokens from streamed
 * text. Bodies are the parsed client JSON, read defensively: a malformed field counts as nothing
 * (validation is the relay's job, not the estimator's).
 */
import type { WireFormat } from '../../relay/types.ts';
import { type ImageRef, imageTokens, type MediaKind, mediaKindOf, mediaTokens } from './media.ts';
import { isRecord } from './options.ts';
import { countTextTokens } from './tokenizer.ts';

/** OpenAI chat framing (reference §5.6): per message, per name, per tool, and the reply primer. */
export const CHAT_TOKENS_PER_MESSAGE = 3;
export const CHAT_TOKENS_PER_NAME = 3;
export const CHAT_TOKENS_PER_TOOL = 8;
export const CHAT_REPLY_PRIMER_TOKENS = 3;
/** Completion tokens added per streamed tool call, for the framing the text does not show. */
export const TOKENS_PER_TOOL_CALL = 7;
/** Transcription and translation are billed as 1,000 tokens per started minute of audio. */
export const TOKENS_PER_AUDIO_MINUTE = 1000;

type Json = Record<string, unknown>;

/** A prompt with nothing to count. */
const nothing = (): PromptTexts => ({ texts: [], tokens: 0 });

/** What a request holds: texts counted together, media costed one by one, and chat framing. */
class Tally {
  readonly texts: string[] = [];
  media = 0;
  messages = 0;
  names = 0;
  tools = 0;
  readonly model: string;

  constructor(model: string) {
    this.model = model;
  }

  text(value: unknown): void {
    if (typeof value === 'string' && value.length > 0) this.texts.push(value);
  }

  /** Structured values (tool arguments, schemas) count as their JSON text. */
  json(value: unknown): void {
    if (typeof value === 'string') this.text(value);
    else if (value !== undefined && value !== null) this.text(JSON.stringify(value));
  }

  image(image: ImageRef): void {
    this.media += imageTokens(this.model, image);
  }

  file(kind: MediaKind, image?: ImageRef): void {
    if (kind === 'image') this.image(image ?? {});
    else this.media += mediaTokens(kind);
  }

  /** The texts joined by newlines (one tokenizer pass), and the media tokens. */
  prompt(): PromptTexts {
    return { texts: this.texts.length > 0 ? [this.texts.join('\n')] : [], tokens: this.media };
  }

  /** What `framing` adds to the prompt (chat's per-message allowances). */
  plus(framing: number): PromptTexts {
    const prompt = this.prompt();
    prompt.tokens += framing;
    return prompt;
  }
}

/**
 * A prompt as counting sees it: texts each counted alone by the tokenizer, plus the tokens known without
 * counting (media, framing). Split so that a large prompt's texts can be counted off the event loop.
 */
export interface PromptTexts {
  texts: string[];
  tokens: number;
}

/** The tokens of `prompt`, counted here. */
export function countPromptTexts(model: string, prompt: PromptTexts): number {
  let tokens = prompt.tokens;
  for (const text of prompt.texts) tokens += countTextTokens(model, text);
  return tokens;
}

/** UTF-16 units the tokenizer would read to count `prompt`. */
export function promptLength(prompt: PromptTexts): number {
  let length = 0;
  for (const text of prompt.texts) length += text.length;
  return length;
}

/** POST /v1/chat/completions. */
export function estimateChatPromptTokens(model: string, body: unknown): number {
  return countPromptTexts(model, chatPrompt(model, body));
}

function chatPrompt(model: string, body: unknown): PromptTexts {
  const tally = new Tally(model);
  const request = record(body);
  for (const message of list(request.messages)) {
    const m = record(message);
    tally.messages++;
    tally.text(m.role);
    if (typeof m.name === 'string') {
      tally.names++;
      tally.text(m.name);
    }
    openAIContent(tally, m.content);
    tally.text(m.refusal);
    for (const call of list(m.tool_calls)) functionCall(tally, record(record(call).function));
    functionCall(tally, record(m.function_call));
  }
  for (const tool of list(request.tools)) {
    tally.tools++;
    functionDefinition(tally, record(record(tool).function));
  }
  for (const fn of list(request.functions)) {
    tally.tools++;
    functionDefinition(tally, record(fn));
  }
  return tally.plus(
    tally.messages * CHAT_TOKENS_PER_MESSAGE +
      tally.names * CHAT_TOKENS_PER_NAME +
      tally.tools * CHAT_TOKENS_PER_TOOL +
      CHAT_REPLY_PRIMER_TOKENS,
  );
}

/**
 * A `prompt` (completions) or `input` (embeddings, moderations): a string, strings, token ids or
 * lists of token ids. Each string is counted alone, as the upstream counts it.
 */
export function estimateInputTokens(model: string, input: unknown): number {
  return countPromptTexts(model, inputPrompt(model, input));
}

function inputPrompt(model: string, input: unknown): PromptTexts {
  const prompt: PromptTexts = { texts: [], tokens: 0 };
  if (typeof input === 'string') prompt.texts.push(input);
  if (!Array.isArray(input)) return prompt;
  for (const item of input) {
    if (typeof item === 'number') prompt.tokens += 1;
    else if (Array.isArray(item)) prompt.tokens += item.length;
    else if (typeof item === 'string') prompt.texts.push(item);
    else if (isRecord(item)) {
      // Moderation's multimodal input: [{type: 'text', text}, {type: 'image_url', image_url}].
      const tally = new Tally(model);
      openAIPart(tally, item);
      const part = tally.prompt();
      prompt.texts.push(...part.texts);
      prompt.tokens += part.tokens;
    }
  }
  return prompt;
}

/** POST /v1/responses. */
export function estimateResponsesPromptTokens(model: string, body: unknown): number {
  return countPromptTexts(model, responsesPrompt(model, body));
}

function responsesPrompt(model: string, body: unknown): PromptTexts {
  const tally = new Tally(model);
  const request = record(body);
  tally.text(request.instructions);
  if (typeof request.input === 'string') tally.text(request.input);
  for (const item of list(request.input)) {
    const it = record(item);
    switch (it.type) {
      case 'function_call':
      case 'custom_tool_call':
        tally.text(it.name);
        tally.json(it.arguments ?? it.input);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        if (Array.isArray(it.output)) openAIContent(tally, it.output);
        else tally.json(it.output);
        break;
      case 'reasoning':
        for (const part of list(it.summary)) tally.text(record(part).text);
        break;
      default:
        // Messages, with or without `type: 'message'`.
        tally.text(it.role);
        openAIContent(tally, it.content);
    }
  }
  for (const tool of list(request.tools)) {
    const t = record(tool);
    if (t.type === 'function') functionDefinition(tally, t);
  }
  return tally.prompt();
}

/** POST /v1/messages (Claude). */
export function estimateClaudePromptTokens(model: string, body: unknown): number {
  return countPromptTexts(model, claudePrompt(model, body));
}

function claudePrompt(model: string, body: unknown): PromptTexts {
  const tally = new Tally(model);
  const request = record(body);
  claudeContent(tally, request.system);
  for (const message of list(request.messages)) {
    const m = record(message);
    tally.text(m.role);
    claudeContent(tally, m.content);
  }
  for (const tool of list(request.tools)) {
    const t = record(tool);
    tally.text(t.name);
    tally.text(t.description);
    tally.json(t.input_schema);
  }
  return tally.prompt();
}

/** POST /v1beta/models/{model}:generateContent and :streamGenerateContent (Gemini). */
export function estimateGeminiPromptTokens(model: string, body: unknown): number {
  return countPromptTexts(model, geminiPrompt(model, body));
}

function geminiPrompt(model: string, body: unknown): PromptTexts {
  const tally = new Tally(model);
  const request = record(body);
  geminiParts(tally, record(field(request, 'systemInstruction', 'system_instruction')).parts);
  for (const content of list(request.contents)) geminiParts(tally, record(content).parts);
  for (const tool of list(request.tools)) {
    for (const declaration of list(field(record(tool), 'functionDeclarations', 'function_declarations'))) {
      functionDefinition(tally, record(declaration));
    }
  }
  return tally.prompt();
}

/** Gemini :embedContent and :batchEmbedContents. */
export function estimateGeminiEmbedTokens(model: string, body: unknown): number {
  return countPromptTexts(model, geminiEmbedPrompt(model, body));
}

function geminiEmbedPrompt(model: string, body: unknown): PromptTexts {
  const tally = new Tally(model);
  const request = record(body);
  geminiParts(tally, record(request.content).parts);
  for (const item of list(request.requests)) geminiParts(tally, record(record(item).content).parts);
  return tally.prompt();
}

/** The prompt tokens of any relayed request. */
export function estimatePromptTokens(format: WireFormat, model: string, body: unknown): number {
  return countPromptTexts(model, promptTexts(format, model, body));
}

/** The texts to count (and the tokens known without counting) of any relayed request. */
export function promptTexts(format: WireFormat, model: string, body: unknown): PromptTexts {
  const request = record(body);
  switch (format) {
    case 'openai-chat':
      return chatPrompt(model, body);
    case 'openai-completions':
      return inputPrompt(model, request.prompt);
    case 'openai-responses':
    case 'openai-responses-compact':
      return responsesPrompt(model, body);
    case 'openai-embeddings':
    case 'openai-moderations':
      return inputPrompt(model, request.input);
    case 'openai-audio-speech':
      return inputPrompt(model, request.input);
    case 'openai-images':
    case 'openai-image-edits':
      return inputPrompt(model, request.prompt);
    case 'rerank': {
      const texts = list(request.documents).map((d) => (typeof d === 'string' ? d : record(d).text));
      return inputPrompt(
        model,
        [request.query, ...texts].filter((t) => typeof t === 'string'),
      );
    }
    case 'claude-messages':
      return claudePrompt(model, body);
    case 'gemini-generate':
      return geminiPrompt(model, body);
    case 'gemini-embed':
      return geminiEmbedPrompt(model, body);
    case 'openai-audio-transcriptions':
    case 'openai-audio-translations':
      // Billed by audio duration (transcriptionTokens), which only the relay can probe.
      return nothing();
    case 'openai-realtime':
      // Billed from each response's reported usage as the session runs.
      return nothing();
    case 'tencent-chat':
    case 'xunfei-chat':
    case 'bedrock-converse':
    case 'cohere-chat':
    case 'cohere-embed':
    case 'cohere-rerank':
    case 'dify-chat':
    case 'coze-chat':
    case 'replicate-chat':
    case 'replicate-images':
    case 'baidu-chat':
    case 'baidu-embeddings':
    case 'zhipu-v3':
    case 'dashscope-rerank':
    case 'dashscope-images':
    case 'ollama-chat':
    case 'ollama-embed':
      // Spoken only upstream: no client sends it (requests are estimated in the client's format).
      return nothing();
    case 'midjourney':
    case 'suno':
    case 'video':
      // Billed per call (reference §9.1, §9.2): no tokens.
      return nothing();
  }
}

/** The completion budget a request asks for (0 when it sets none), for the reservation. */
export function requestedMaxTokens(format: WireFormat, body: unknown): number {
  const request = record(body);
  const positive = (...values: unknown[]) =>
    Math.max(0, ...values.map((v) => (typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : 0)));
  switch (format) {
    case 'openai-chat':
      return positive(request.max_tokens, request.max_completion_tokens);
    case 'openai-completions':
    case 'claude-messages':
      return positive(request.max_tokens);
    case 'openai-responses':
      return positive(request.max_output_tokens);
    case 'gemini-generate': {
      const config = record(field(request, 'generationConfig', 'generation_config'));
      return positive(field(config, 'maxOutputTokens', 'max_output_tokens'));
    }
    default:
      return 0;
  }
}

/**
 * Completion tokens of a response the upstream did not count: its text (content, reasoning and
 * tool-call names and arguments, as streamed) plus a framing allowance per tool call.
 */
export function estimateCompletionTokens(model: string, text: string, toolCalls = 0): number {
  return countTextTokens(model, text) + Math.max(0, toolCalls) * TOKENS_PER_TOOL_CALL;
}

/** Tokens billed for transcribing or translating `seconds` of audio. */
export function transcriptionTokens(seconds: number): number {
  return Math.max(0, Math.ceil(seconds / 60)) * TOKENS_PER_AUDIO_MINUTE;
}

// --- Content walkers ----------------------------------------------------------------------------

/** OpenAI chat or Responses content: a string or a list of typed parts. */
function openAIContent(tally: Tally, content: unknown): void {
  if (typeof content === 'string') tally.text(content);
  else for (const part of list(content)) openAIPart(tally, record(part));
}

function openAIPart(tally: Tally, part: Json): void {
  switch (part.type) {
    case 'image_url': {
      const image = part.image_url;
      tally.image(typeof image === 'string' ? { url: image } : imageRef(record(image).url, record(image).detail));
      return;
    }
    case 'input_image':
      tally.image(imageRef(part.image_url, part.detail));
      return;
    case 'input_audio':
      tally.file('audio');
      return;
    case 'video_url':
      tally.file('video');
      return;
    case 'file':
    case 'input_file':
      tally.file('file');
      return;
    case 'refusal':
      tally.text(part.refusal);
      return;
    default:
      // text, input_text, output_text, and unknown parts that carry text.
      tally.text(part.text);
  }
}

function claudeContent(tally: Tally, content: unknown): void {
  if (typeof content === 'string') {
    tally.text(content);
    return;
  }
  for (const item of list(content)) {
    const block = record(item);
    switch (block.type) {
      case 'image': {
        const source = record(block.source);
        if (source.type === 'base64') tally.image({ base64: stringOr(source.data) });
        else tally.image(imageRef(source.url));
        break;
      }
      case 'document':
        tally.file('file');
        break;
      case 'tool_use':
      case 'server_tool_use':
        tally.text(block.name);
        tally.json(block.input);
        break;
      case 'tool_result':
        claudeContent(tally, block.content);
        break;
      case 'thinking':
        tally.text(block.thinking);
        break;
      default:
        tally.text(block.text);
    }
  }
}

function geminiParts(tally: Tally, parts: unknown): void {
  for (const item of list(parts)) {
    const part = record(item);
    tally.text(part.text);
    const inline = record(field(part, 'inlineData', 'inline_data'));
    if (inline.data !== undefined) {
      const mimeType = stringOr(field(inline, 'mimeType', 'mime_type'));
      tally.file(mediaKindOf(mimeType), { base64: stringOr(inline.data) });
    }
    const file = record(field(part, 'fileData', 'file_data'));
    if (field(file, 'fileUri', 'file_uri') !== undefined) {
      tally.file(mediaKindOf(stringOr(field(file, 'mimeType', 'mime_type'))), {});
    }
    const call = record(field(part, 'functionCall', 'function_call'));
    tally.text(call.name);
    tally.json(call.args);
    const response = record(field(part, 'functionResponse', 'function_response'));
    tally.text(response.name);
    tally.json(response.response);
    tally.text(record(field(part, 'executableCode', 'executable_code')).code);
    tally.text(record(field(part, 'codeExecutionResult', 'code_execution_result')).output);
  }
}

function functionCall(tally: Tally, fn: Json): void {
  tally.text(fn.name);
  tally.json(fn.arguments);
}

function functionDefinition(tally: Tally, fn: Json): void {
  tally.text(fn.name);
  tally.text(fn.description);
  tally.json(fn.parameters);
}

// --- Defensive readers ---------------------------------------------------------------------------

const EMPTY: Json = Object.freeze({}) as Json;

function record(value: unknown): Json {
  return isRecord(value) ? value : EMPTY;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Gemini's REST API takes camelCase and snake_case field names alike. */
function field(object: Json, camel: string, snake: string): unknown {
  return object[camel] ?? object[snake];
}

function imageRef(url: unknown, detail?: unknown): ImageRef {
  const ref: ImageRef = {};
  if (typeof url === 'string') ref.url = url;
  if (typeof detail === 'string') ref.detail = detail;
  return ref;
}

/**
 * The texts a client sends for the model, found in the parsed body of each client format: what the
 * sensitive-word check reads and, when it masks, rewrites in place before the body goes upstream.
 * Media (images, audio files, base64 data), tool schemas and parameters are not prompt text.
 */
import type { WireFormat } from '../types.ts';

/** Answers the text to keep: the same string leaves the body as it is, another replaces it there. */
export type TextEdit = (text: string) => string;

type Json = Record<string, unknown>;

/** Runs `edit` on every prompt text of a request of `format`, replacing those it changes. */
export function editPromptTexts(format: WireFormat, body: Json | FormData, edit: TextEdit): void {
  if (body instanceof FormData) {
    // Image edits, audio transcriptions/translations and video uploads: only the `prompt` field is text.
    const prompt = body.get('prompt');
    if (typeof prompt !== 'string' || prompt === '') return;
    const kept = edit(prompt);
    if (kept !== prompt) body.set('prompt', kept);
    return;
  }
  switch (format) {
    case 'openai-chat':
      for (const message of records(body.messages)) contentAt(message, 'content', edit);
      return;
    case 'openai-completions':
      stringsAt(body, 'prompt', edit);
      return;
    case 'openai-responses':
    case 'openai-responses-compact':
      responses(body, edit);
      return;
    case 'openai-embeddings':
    case 'openai-moderations':
      // A string, strings, token ids, or (moderations) parts of `{type: 'text', text}`.
      contentAt(body, 'input', edit);
      return;
    case 'openai-images':
    case 'openai-image-edits':
      textAt(body, 'prompt', edit);
      return;
    case 'openai-audio-speech':
      textAt(body, 'input', edit);
      return;
    case 'rerank':
      textAt(body, 'query', edit);
      contentAt(body, 'documents', edit);
      return;
    case 'claude-messages':
      contentAt(body, 'system', edit);
      for (const message of records(body.messages)) claudeContent(message, edit);
      return;
    case 'gemini-generate':
      geminiContent(body.systemInstruction ?? body.system_instruction, edit);
      for (const content of records(body.contents)) geminiContent(content, edit);
      return;
    case 'gemini-embed':
      geminiContent(body.content, edit);
      for (const request of records(body.requests)) geminiContent(request.content, edit);
      return;
    case 'midjourney':
    case 'video':
      textAt(body, 'prompt', edit);
      return;
    case 'suno':
      // Custom mode's lyrics are its `prompt`; the description, style tags and title steer the song too.
      for (const key of ['prompt', 'gpt_description_prompt', 'tags', 'title']) textAt(body, key, edit);
      return;
    case 'openai-realtime':
      realtimeEvent(body, edit);
      return;
    default:
      // Formats only upstreams speak: no client sends them.
      return;
  }
}

/** POST /v1/responses: the instructions, and the input as a string or items (messages, tool outputs). */
function responses(body: Json, edit: TextEdit): void {
  textAt(body, 'instructions', edit);
  if (typeof body.input === 'string') {
    textAt(body, 'input', edit);
    return;
  }
  for (const item of records(body.input)) {
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
      contentAt(item, 'output', edit);
    else contentAt(item, 'content', edit);
  }
}

/**
 * A Realtime client event: session and response instructions, and the text of conversation items
 * (created alone or as a response's input); audio is not text.
 */
function realtimeEvent(event: Json, edit: TextEdit): void {
  if (isJson(event.session)) textAt(event.session, 'instructions', edit);
  if (isJson(event.response)) {
    textAt(event.response, 'instructions', edit);
    for (const item of records(event.response.input)) realtimeItem(item, edit);
  }
  if (isJson(event.item)) realtimeItem(event.item, edit);
}

/** A Realtime conversation item: a message's text parts, or a tool call's output. */
function realtimeItem(item: Json, edit: TextEdit): void {
  contentAt(item, 'content', edit);
  textAt(item, 'output', edit);
}

/** A Claude message: text blocks, and the text of tool results. */
function claudeContent(message: Json, edit: TextEdit): void {
  contentAt(message, 'content', edit);
  for (const block of records(message.content)) {
    if (block.type === 'tool_result') contentAt(block, 'content', edit);
  }
}

/** A Gemini content (or system instruction): the `text` of its parts. */
function geminiContent(content: unknown, edit: TextEdit): void {
  if (isJson(content)) contentAt(content, 'parts', edit);
}

/** `holder[key]` as a string, or a list of strings and parts with a `text`. */
function contentAt(holder: Json, key: string, edit: TextEdit): void {
  const value = holder[key];
  if (typeof value === 'string') {
    textAt(holder, key, edit);
    return;
  }
  if (!Array.isArray(value)) return;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item === 'string') replaceIn(value, i, item, edit);
    else if (isJson(item)) textAt(item, 'text', edit);
  }
}

/** `holder[key]` as a string or a list of strings (other items, such as token ids, are not text). */
function stringsAt(holder: Json, key: string, edit: TextEdit): void {
  const value = holder[key];
  if (typeof value === 'string') textAt(holder, key, edit);
  else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') replaceIn(value, i, item, edit);
    }
  }
}

function textAt(holder: Json, key: string, edit: TextEdit): void {
  const value = holder[key];
  if (typeof value !== 'string' || value === '') return;
  const kept = edit(value);
  if (kept !== value) holder[key] = kept;
}

function replaceIn(list: unknown[], index: number, value: string, edit: TextEdit): void {
  if (value === '') return;
  const kept = edit(value);
  if (kept !== value) list[index] = kept;
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isJson) : [];
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

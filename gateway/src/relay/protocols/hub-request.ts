import type { Json } from '../convert/types.ts';
import type { WireFormat } from '../types.ts';
import { isObject } from './upstream-json.ts';

/**
 * Reading a hub (OpenAI chat) request for an upstream with a format of its own: message texts,
 * system prompts, images, the token budget and stop words, and what such upstreams refuse.
 */

/** The chat-like client formats, all served through the hub. */
export const CHAT_FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/** A hub message's text: a string, or the text parts of a content array joined (by a line break unless told). */
export function messageText(content: unknown, separator = '\n'): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join(separator);
}

/** The system messages of a hub request, joined (upstreams that take the system prompt apart). */
export function systemText(messages: unknown): string {
  return (Array.isArray(messages) ? messages : [])
    .filter((m) => isObject(m) && (m.role === 'system' || m.role === 'developer'))
    .map((m) => messageText(m.content))
    .filter((text) => text !== '')
    .join('\n');
}

/** The last user message of a hub request: what an app answers (it keeps the earlier turns itself). */
export function lastUserMessage(body: Json): Json {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = [...messages].reverse().find((m) => m?.role === 'user');
  if (!last) throw new Error('the request has no user message to send');
  return last;
}

/** The image URLs of a hub message's content parts. */
export function imageUrls(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((part) => part?.type === 'image_url')
    .map((part) => (typeof part.image_url === 'string' ? part.image_url : part.image_url?.url))
    .filter((url): url is string => typeof url === 'string');
}

/** Refuses client tools: the app's own configuration owns its tools, it never calls a client's. */
export function refuseTools(body: Json, upstream: string): void {
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    throw new Error(`${upstream} runs the tools configured in the app itself; a request's own tools cannot be used`);
  }
}

/** The hub's completion-token budget, under either of OpenAI's names. */
export function maxTokens(body: Json): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && value > 0 ? value : undefined;
}

/** `stop` as a list. */
export function stopList(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string') : undefined;
}

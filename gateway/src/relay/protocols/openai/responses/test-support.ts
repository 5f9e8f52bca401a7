/**
 * Helpers for this folder's tests: realistic event sequences, and the official openai client's own
 * stream accumulators to check that what the converters send is what that client accepts.
 */
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';

export const ctx: ConvertContext = { model: 'client-model', upstreamModel: 'upstream-model', stream: true };

/** A Responses SSE event as OpenAI sends it (event name = type, a sequence number). */
export function responsesEvents(list: Json[]): SseEvent[] {
  return list.map((data, sequence_number) => ({
    event: data.type,
    data: JSON.stringify({ ...data, sequence_number }),
  }));
}

/** Hub chunks as an OpenAI chat stream sends them. */
export function chatChunks(deltas: Array<{ delta?: Json; finish?: string; usage?: Json; choices?: [] }>): SseEvent[] {
  return deltas.map(({ delta, finish, usage, choices }) => ({
    data: JSON.stringify({
      id: 'chatcmpl-up',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'upstream-model',
      choices: choices ?? [{ index: 0, delta: delta ?? {}, finish_reason: finish ?? null }],
      ...(usage ? { usage } : {}),
    }),
  }));
}

/** Runs events through a converter: every push, then end(). */
export function run(converter: StreamConverter, events: SseEvent[]): SseEvent[] {
  return [...events.flatMap((event) => converter.push(event)), ...converter.end()];
}

export const parsed = (events: SseEvent[]): Json[] => events.map((event) => JSON.parse(event.data));

function ndjson(events: SseEvent[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(`${event.data}\n`));
      controller.close();
    },
  });
}

/** The Response the official client assembles from a Responses stream (it validates order and identities). */
export async function sdkResponse(events: SseEvent[]): Promise<Json> {
  return (await ResponseStream.fromReadableStream(ndjson(events)).finalResponse()) as unknown as Json;
}

/** The chat completion the official client assembles from hub chunks. */
export async function sdkChatCompletion(events: SseEvent[]): Promise<Json> {
  return (await ChatCompletionStream.fromReadableStream(ndjson(events)).finalChatCompletion()) as unknown as Json;
}

/** What a hub stream says, assembled: text, reasoning, signature, tool calls, finish, usage, errors. */
export function assembleChat(events: SseEvent[]) {
  const result = {
    role: undefined as string | undefined,
    content: '',
    refusal: '',
    reasoning: '',
    signature: undefined as string | undefined,
    toolCalls: [] as Array<{ id: string; name: string; arguments: string }>,
    finish: undefined as string | undefined,
    usage: undefined as Json | undefined,
    errors: [] as Json[],
  };
  for (const chunk of parsed(events)) {
    if (chunk.error) {
      result.errors.push(chunk.error);
      continue;
    }
    if (chunk.usage) result.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    if (delta.role) result.role = delta.role;
    result.content += delta.content ?? '';
    result.refusal += delta.refusal ?? '';
    result.reasoning += delta.reasoning_content ?? '';
    if (delta.reasoning_signature) result.signature = delta.reasoning_signature;
    for (const call of delta.tool_calls ?? []) {
      result.toolCalls[call.index] ??= { id: '', name: '', arguments: '' };
      const slot = result.toolCalls[call.index]!;
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      slot.arguments += call.function?.arguments ?? '';
    }
    if (choice.finish_reason) result.finish = choice.finish_reason;
  }
  return result;
}

import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import { codeOfGeminiError, geminiStatus, typeForStatus } from './errors.ts';
import {
  answerCallId,
  asArray,
  asNumber,
  asObject,
  asString,
  field,
  isObject,
  nowSeconds,
  parseArguments,
  randomId,
} from './fields.ts';
import { finishFromHub, finishToHub, usageFromHub, usageToHub } from './usage.ts';

/**
 * Streams, event by event. Each Gemini SSE event is one GenerateContentResponse chunk whose parts are
 * complete (a functionCall arrives whole); usageMetadata rides on the chunks, the last being final.
 */

/** Gemini chunks → OpenAI chat chunks (no [DONE]). */
export class GeminiToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #id: string | undefined;
  readonly #created = nowSeconds();
  readonly #started = new Set<number>();
  readonly #finished = new Set<number>();
  readonly #calls = new Map<number, number>();
  #callCounter = 0;
  #tag: string | undefined;
  #usage: Json | undefined;
  #usageSent = false;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    const parsed = parsedData(event);
    // Without alt=sse Google streams one JSON array; accept its elements the same way.
    const chunks = Array.isArray(parsed) ? parsed : [parsed];
    return chunks.filter(isObject).flatMap((chunk) => this.#chunk(chunk));
  }

  end(): SseEvent[] {
    const out: Json[] = [];
    for (const index of this.#started) {
      if (!this.#finished.has(index)) out.push(this.#finish(index, 'STOP'));
    }
    if (this.#usage && !this.#usageSent) out.push(this.#usageChunk());
    return out.map(toEvent);
  }

  #chunk(chunk: Json): SseEvent[] {
    const error = asObject(chunk.error);
    if (error) {
      const status = asString(error.status) ?? geminiStatus(asNumber(error.code) ?? 500);
      return [
        toEvent({
          error: {
            message: asString(error.message) ?? 'upstream error',
            type: typeForStatus(status),
            code: codeOfGeminiError(error),
          },
        }),
      ];
    }
    this.#tag ??= asString(chunk.responseId) ?? randomId();
    this.#id ??= `chatcmpl-${this.#tag}`;
    const out: Json[] = [];
    const candidates = asArray(chunk.candidates).filter(isObject);
    candidates.forEach((candidate, position) => {
      const index = asNumber(candidate.index) ?? position;
      for (const part of asArray(asObject(candidate.content)?.parts).filter(isObject)) {
        const delta = this.#partDelta(part, index);
        if (delta) out.push(this.#delta(index, delta, null));
      }
      if (typeof candidate.finishReason === 'string' && !this.#finished.has(index)) {
        out.push(this.#finish(index, candidate.finishReason));
      }
    });
    if (candidates.length === 0 && asObject(chunk.promptFeedback)?.blockReason && !this.#finished.has(0)) {
      out.push(this.#finish(0, 'SAFETY'));
    }
    const usage = usageToHub(chunk.usageMetadata);
    if (usage) this.#usage = usage;
    const done = this.#finished.size > 0 && [...this.#started].every((index) => this.#finished.has(index));
    if (done && this.#usage && !this.#usageSent) out.push(this.#usageChunk());
    return out.map(toEvent);
  }

  #partDelta(part: Json, index: number): Json | undefined {
    const delta: Json = {};
    const call = asObject(field(part, 'functionCall'));
    if (call) {
      const position = this.#calls.get(index) ?? 0;
      this.#calls.set(index, position + 1);
      delta.tool_calls = [
        {
          index: position,
          id: asString(call.id) ?? answerCallId(this.#tag, this.#callCounter++),
          type: 'function',
          function: { name: asString(call.name) ?? '', arguments: JSON.stringify(call.args ?? {}) },
        },
      ];
    } else if (typeof part.text === 'string' && part.text !== '') {
      if (part.thought === true) delta.reasoning_content = part.text;
      else delta.content = part.text;
    } else if (isObject(field(part, 'inlineData'))) {
      const inline = asObject(field(part, 'inlineData'))!;
      delta.content = `![image](data:${asString(field(inline, 'mimeType')) ?? 'image/png'};base64,${asString(inline.data) ?? ''})`;
    }
    const signature = asString(field(part, 'thoughtSignature'));
    if (signature) delta.reasoning_signature = signature;
    return Object.keys(delta).length > 0 ? delta : undefined;
  }

  #delta(index: number, delta: Json, finish: string | null): Json {
    if (!this.#started.has(index)) {
      this.#started.add(index);
      delta = { role: 'assistant', ...delta };
    }
    return {
      id: this.#id,
      object: 'chat.completion.chunk',
      created: this.#created,
      model: this.#ctx.model,
      choices: [{ index, delta, finish_reason: finish, logprobs: null }],
    };
  }

  #finish(index: number, reason: string): Json {
    this.#finished.add(index);
    return this.#delta(index, {}, finishToHub(reason, (this.#calls.get(index) ?? 0) > 0));
  }

  #usageChunk(): Json {
    this.#usageSent = true;
    return {
      id: this.#id,
      object: 'chat.completion.chunk',
      created: this.#created,
      model: this.#ctx.model,
      choices: [],
      usage: this.#usage,
    };
  }
}

interface HeldCall {
  name: string;
  arguments: string;
  signature?: string;
}

/**
 * OpenAI chat chunks → Gemini chunks. Text and thoughts go out as they come; a tool call's argument
 * fragments are held until its choice finishes (Gemini sends a functionCall whole). The finishing
 * chunk waits for the usage chunk that follows it, so that finishReason and usageMetadata arrive
 * together on the last chunk, as Gemini sends them.
 */
export class HubToGeminiStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #responseId: string | undefined;
  readonly #calls = new Map<number, Map<number, HeldCall>>();
  #pending: Json | undefined;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    if (event.data === '[DONE]') return [];
    const chunk = parsedData(event);
    if (!isObject(chunk)) return [];
    const out: Json[] = [];
    const error = asObject(chunk.error);
    if (error) {
      this.#flush(out);
      const status = asNumber(error.status) ?? asNumber(error.code) ?? 500;
      out.push({
        error: { code: status, message: asString(error.message) ?? 'upstream error', status: geminiStatus(status) },
      });
      return out.map(toEvent);
    }
    if (!this.#responseId && asString(chunk.id)) {
      const id = chunk.id as string;
      this.#responseId = id.startsWith('chatcmpl-') ? id.slice('chatcmpl-'.length) : id;
    }
    for (const choice of asArray(chunk.choices).filter(isObject)) this.#choice(choice, out);
    const usage = usageFromHub(chunk.usage);
    if (usage) {
      const last = this.#pending ?? this.#chunk([]);
      this.#pending = undefined;
      // usageMetadata before modelVersion/responseId, where Gemini puts it.
      const { modelVersion, responseId, ...rest } = last;
      out.push({ ...rest, usageMetadata: usage, modelVersion, responseId });
    }
    return out.map(toEvent);
  }

  end(): SseEvent[] {
    const out: Json[] = [];
    // Calls of a choice that never finished (the upstream stopped short) still go out, whole.
    for (const index of [...this.#calls.keys()]) this.#finishChoice(index, 'stop');
    this.#flush(out);
    return out.map(toEvent);
  }

  #choice(choice: Json, out: Json[]): void {
    const index = asNumber(choice.index) ?? 0;
    const delta = asObject(choice.delta) ?? {};
    const parts: Json[] = [];
    const reasoning = asString(delta.reasoning_content);
    if (reasoning) parts.push({ text: reasoning, thought: true });
    const content = asString(delta.content);
    if (content) parts.push({ text: content });
    const touched: HeldCall[] = [];
    for (const fragment of asArray(delta.tool_calls).filter(isObject)) {
      const held = this.#calls.get(index) ?? new Map<number, HeldCall>();
      this.#calls.set(index, held);
      const position = asNumber(fragment.index) ?? held.size;
      const call = held.get(position) ?? { name: '', arguments: '' };
      held.set(position, call);
      const fn = asObject(fragment.function);
      if (asString(fn?.name)) call.name = fn!.name;
      if (asString(fn?.arguments)) call.arguments += fn!.arguments;
      touched.push(call);
    }
    const signature = asString(delta.reasoning_signature);
    if (signature) {
      const heldCall = [...(this.#calls.get(index)?.values() ?? [])].find((call) => !call.signature);
      const target = touched[0] ?? parts.at(-1) ?? heldCall;
      if (target && 'arguments' in target) target.signature = signature;
      else if (target) target.thoughtSignature = signature;
      else parts.push({ text: '', thoughtSignature: signature });
    }
    if (parts.length > 0) {
      this.#flush(out);
      out.push(this.#chunk([{ content: { role: 'model', parts }, index }]));
    }
    if (typeof choice.finish_reason === 'string') this.#finishChoice(index, choice.finish_reason);
  }

  #finishChoice(index: number, reason: string): void {
    const held = [...(this.#calls.get(index)?.values() ?? [])];
    this.#calls.delete(index);
    const parts = held.map((call) => {
      const part: Json = { functionCall: { name: call.name, args: parseArguments(call.arguments) } };
      if (call.signature) part.thoughtSignature = call.signature;
      return part;
    });
    const candidate = {
      content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] },
      finishReason: finishFromHub(reason),
      index,
    };
    if (this.#pending) this.#pending.candidates.push(candidate);
    else this.#pending = this.#chunk([candidate]);
  }

  #flush(out: Json[]): void {
    if (this.#pending) out.push(this.#pending);
    this.#pending = undefined;
  }

  #chunk(candidates: Json[]): Json {
    this.#responseId ??= randomId();
    const chunk: Json = candidates.length > 0 ? { candidates } : {};
    chunk.modelVersion = this.#ctx.model;
    chunk.responseId = this.#responseId;
    return chunk;
  }
}

const toEvent = (data: Json): SseEvent => ({ data: JSON.stringify(data) });

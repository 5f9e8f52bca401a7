import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, type HubUsage, hubAnswer, hubError, hubUsage } from '../../hub-answer.ts';
import { maxTokens, messageText, stopList } from '../../hub-request.ts';
import { eventJson, isObject } from '../../upstream-json.ts';

/**
 * Ollama `/api/chat` ↔ the hub. Sampling goes in `options` (`num_predict` is the token budget),
 * images as bare base64 beside the text, tool calls with arguments as objects and no ids; a
 * stream is NDJSON, its last line `done: true` with the token counts.
 */
export const ollamaChatAdapter: UpstreamAdapter = {
  format: 'ollama-chat',
  hub: 'openai-chat',
  requestFromHub,
  responseToHub,
  streamToHub: (ctx) => new OllamaToHubStream(ctx),
};

function requestFromHub(body: Json): Json {
  const toolNames = new Map<string, string>();
  const messages = (Array.isArray(body.messages) ? body.messages : [])
    .filter(isObject)
    .map((message: Json) => ollamaMessage(message, toolNames));
  const options: Json = {};
  if (typeof body.temperature === 'number') options.temperature = body.temperature;
  if (typeof body.top_p === 'number') options.top_p = body.top_p;
  if (typeof body.seed === 'number') options.seed = body.seed;
  if (typeof body.frequency_penalty === 'number') options.frequency_penalty = body.frequency_penalty;
  if (typeof body.presence_penalty === 'number') options.presence_penalty = body.presence_penalty;
  const max = maxTokens(body);
  if (max) options.num_predict = max;
  const stop = stopList(body.stop);
  if (stop?.length) options.stop = stop;
  // Ollama streams unless told not to.
  const out: Json = { messages, stream: body.stream === true };
  if (Object.keys(options).length) out.options = options;
  if (Array.isArray(body.tools) && body.tools.length) out.tools = body.tools;
  const format = responseFormat(body.response_format);
  if (format !== undefined) out.format = format;
  return out;
}

function ollamaMessage(message: Json, toolNames: Map<string, string>): Json {
  const role = message.role === 'developer' ? 'system' : String(message.role ?? 'user');
  const out: Json = { role, content: messageText(message.content) };
  const images = (Array.isArray(message.content) ? message.content : [])
    .filter((part: unknown) => isObject(part) && part.type === 'image_url')
    .map((part: Json) => String(part.image_url?.url ?? part.image_url ?? ''))
    .map((url: string) => url.replace(/^data:[^,]*;base64,/, ''));
  if (images.length) out.images = images;
  if (role === 'assistant' && Array.isArray(message.tool_calls)) {
    out.tool_calls = message.tool_calls
      .filter((c: unknown) => isObject(c) && isObject(c.function))
      .map((c: Json) => {
        toolNames.set(String(c.id), String(c.function.name));
        return { function: { name: c.function.name, arguments: parseArguments(c.function.arguments) } };
      });
  }
  if (role === 'tool') {
    const name = toolNames.get(String(message.tool_call_id));
    if (name) out.tool_name = name;
  }
  return out;
}

function parseArguments(args: unknown): Json {
  if (isObject(args)) return args;
  try {
    const parsed: unknown = JSON.parse(String(args ?? '{}'));
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** OpenAI's response_format as Ollama's `format`: "json", or the JSON schema itself. */
function responseFormat(format: unknown): unknown {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object') return 'json';
  if (format.type === 'json_schema' && isObject(format.json_schema)) return format.json_schema.schema;
  return undefined;
}

function responseToHub(body: Json, ctx: ConvertContext): Json {
  const message = isObject(body.message) ? body.message : {};
  const out: Json = { content: typeof message.content === 'string' ? message.content : '' };
  if (typeof message.thinking === 'string' && message.thinking) out.reasoning_content = message.thinking;
  const calls = toolCalls(message.tool_calls, 0);
  if (calls.length) out.tool_calls = calls;
  return hubAnswer({
    id: chatId(body),
    model: ctx.model,
    message: out,
    finishReason: finishReason(body, calls.length > 0),
    usage: usageToHub(body),
  });
}

/** Ollama's calls with the ids and string arguments OpenAI clients expect. */
function toolCalls(calls: unknown, first: number): Json[] {
  return (Array.isArray(calls) ? calls : [])
    .filter((call) => isObject(call) && isObject(call.function))
    .map((call: Json, i: number) => ({
      index: first + i,
      id: `call_${first + i}`,
      type: 'function',
      function: {
        name: String(call.function.name ?? ''),
        arguments:
          typeof call.function.arguments === 'string'
            ? call.function.arguments
            : JSON.stringify(call.function.arguments ?? {}),
      },
    }));
}

function finishReason(body: Json, calledTools: boolean): string {
  if (calledTools) return 'tool_calls';
  return body.done_reason === 'length' ? 'length' : 'stop';
}

const chatId = (body: Json) => `chatcmpl-ollama-${Date.parse(String(body.created_at)) || Date.now()}`;

function usageToHub(body: Json): HubUsage | undefined {
  if (body.prompt_eval_count === undefined && body.eval_count === undefined) return undefined;
  return hubUsage(Number(body.prompt_eval_count) || 0, Number(body.eval_count) || 0);
}

/** NDJSON lines → hub chunks; the `done` line gives the finish chunk and the usage chunk. */
class OllamaToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #chunks: HubChunks | undefined;
  #tools = 0;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    const line = eventJson(event);
    if (!line) return [];
    if (typeof line.error === 'string') {
      return [hubError(line.error, null, 'ollama_error')];
    }
    this.#chunks ??= new HubChunks(chatId(line), this.#ctx.model);
    const message = isObject(line.message) ? line.message : {};
    const events: SseEvent[] = [];
    if (typeof message.thinking === 'string' && message.thinking) {
      events.push(this.#chunks.delta({ reasoning_content: message.thinking }));
    }
    if (typeof message.content === 'string' && message.content) {
      events.push(this.#chunks.delta({ content: message.content }));
    }
    const calls = toolCalls(message.tool_calls, this.#tools);
    if (calls.length) {
      this.#tools += calls.length;
      events.push(this.#chunks.delta({ tool_calls: calls }));
    }
    if (line.done === true) {
      events.push(this.#chunks.delta({}, finishReason(line, this.#tools > 0)));
      const usage = usageToHub(line);
      if (usage) events.push(this.#chunks.usage(usage));
    }
    return events;
  }

  end(): SseEvent[] {
    return [];
  }
}

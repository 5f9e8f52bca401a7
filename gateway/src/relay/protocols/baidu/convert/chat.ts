import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, type HubUsage, hubAnswer, hubError, hubUsage } from '../../hub-answer.ts';
import { maxTokens, messageText, stopList, systemText } from '../../hub-request.ts';
import { eventJson, isObject } from '../../upstream-json.ts';

/**
 * ERNIE v1 chat (`/wenxinworkshop/chat/{endpoint}`) ↔ the hub. Its body takes the system prompt
 * apart, user and assistant turns alternating (tool results as `function` turns), temperature in
 * (0, 1], and OpenAI's older `functions`; the answer is `{result, is_truncated, function_call, usage}`.
 */
export const baiduChatAdapter: UpstreamAdapter = {
  format: 'baidu-chat',
  hub: 'openai-chat',
  requestFromHub,
  responseToHub,
  streamToHub: (ctx) => new BaiduToHubStream(ctx),
};

function requestFromHub(body: Json): Json {
  const out: Json = { messages: baiduMessages(body.messages), stream: body.stream === true };
  const system = systemText(body.messages);
  if (system) out.system = system;
  if (typeof body.temperature === 'number') out.temperature = Math.min(Math.max(body.temperature, 0.01), 1);
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  const max = maxTokens(body);
  if (max) out.max_output_tokens = max;
  const stop = stopList(body.stop);
  if (stop?.length) out.stop = stop;
  if (typeof body.user === 'string') out.user_id = body.user;
  const functions = (Array.isArray(body.tools) ? body.tools : [])
    .filter((tool) => isObject(tool) && isObject(tool.function))
    .map((tool) => {
      const fn = tool.function as Json;
      return { name: fn.name, description: fn.description ?? '', parameters: fn.parameters ?? { type: 'object' } };
    });
  if (functions.length) out.functions = functions;
  return out;
}

/** Hub messages as Baidu's alternating turns: consecutive turns of one role are merged. */
function baiduMessages(messages: unknown): Json[] {
  const toolNames = new Map<string, string>();
  const out: Json[] = [];
  for (const message of Array.isArray(messages) ? messages : []) {
    if (!isObject(message) || message.role === 'system' || message.role === 'developer') continue;
    const turn = baiduTurn(message, toolNames);
    const last = out.at(-1);
    if (last && last.role === turn.role && turn.role !== 'function' && !last.function_call && !turn.function_call) {
      last.content = [last.content, turn.content].filter((text) => text !== '').join('\n');
    } else {
      out.push(turn);
    }
  }
  return out;
}

function baiduTurn(message: Json, toolNames: Map<string, string>): Json {
  const content = messageText(message.content);
  if (message.role === 'tool') {
    return { role: 'function', name: toolNames.get(String(message.tool_call_id)) ?? 'function', content };
  }
  if (message.role !== 'assistant') return { role: 'user', content };
  const call = (Array.isArray(message.tool_calls) ? message.tool_calls : []).find(
    (c: unknown) => isObject(c) && isObject(c.function),
  );
  if (!call) return { role: 'assistant', content };
  for (const c of message.tool_calls) if (isObject(c?.function)) toolNames.set(String(c.id), String(c.function.name));
  return {
    role: 'assistant',
    content,
    function_call: { name: call.function.name, arguments: String(call.function.arguments ?? '{}') },
  };
}

function responseToHub(body: Json, ctx: ConvertContext): Json {
  const call = isObject(body.function_call) ? body.function_call : undefined;
  const message: Json = { content: typeof body.result === 'string' ? body.result : '' };
  if (call) message.tool_calls = [toolCall(call, body.id)];
  return hubAnswer({
    id: String(body.id ?? 'as-tollgate'),
    model: ctx.model,
    message,
    finishReason: finishReason(body),
    usage: usageToHub(body.usage),
  });
}

function toolCall(call: Json, id: unknown): Json {
  return {
    id: `call_${String(id ?? 'baidu')}`,
    type: 'function',
    function: { name: String(call.name ?? ''), arguments: String(call.arguments ?? '{}') },
  };
}

function finishReason(body: Json): string {
  if (isObject(body.function_call) || body.finish_reason === 'function_call') return 'tool_calls';
  if (body.is_truncated === true || body.finish_reason === 'length') return 'length';
  if (body.finish_reason === 'content_filter') return 'content_filter';
  return 'stop';
}

export function usageToHub(usage: unknown): HubUsage | undefined {
  if (!isObject(usage)) return undefined;
  return hubUsage(Number(usage.prompt_tokens) || 0, Number(usage.completion_tokens) || 0);
}

/** Baidu's stream (one `{result, is_end, usage}` per event) → hub chunks, usage after the last. */
class BaiduToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #chunks: HubChunks | undefined;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    const data = eventJson(event);
    if (!data) return [];
    if (typeof data.error_msg === 'string') {
      return [hubError(data.error_msg, String(data.error_code ?? ''), 'baidu_error')];
    }
    this.#chunks ??= new HubChunks(String(data.id ?? 'as-tollgate'), this.#ctx.model);
    const events: SseEvent[] = [];
    if (typeof data.result === 'string' && data.result !== '')
      events.push(this.#chunks.delta({ content: data.result }));
    if (isObject(data.function_call)) {
      events.push(this.#chunks.delta({ tool_calls: [{ index: 0, ...toolCall(data.function_call, data.id) }] }));
    }
    if (data.is_end === true) {
      events.push(this.#chunks.delta({}, finishReason(data)));
      const usage = usageToHub(data.usage);
      if (usage) events.push(this.#chunks.usage(usage));
    }
    return events;
  }

  end(): SseEvent[] {
    return [];
  }
}

import type { ConvertContext, Json } from '../../../convert/types.ts';
import { asArray, asNumber, asString, isObject, put } from './fields.ts';

/**
 * A hub request (OpenAI chat) → Cohere's v2 chat request. The two are close: Cohere takes the
 * same roles (system, user, assistant, tool), the same function tools and assistant tool_calls, and
 * tool results by tool_call_id. What differs is spelling (p, stop_sequences, tool_choice in capitals),
 * and that the thinking an assistant showed before calling tools is its `tool_plan`.
 */
export function hubToCohereChat(body: Json, ctx: ConvertContext): Json {
  const request: Json = {
    model: ctx.upstreamModel,
    messages: asArray(body.messages).filter(isObject).map(message),
    // Cohere answers whole unless asked to stream; the client's request decides, whatever its format.
    stream: ctx.stream,
  };
  const { tools, choice } = toolsAndChoice(body.tools, body.tool_choice);
  put(request, 'tools', tools);
  put(request, 'tool_choice', choice);
  put(request, 'max_tokens', asNumber(body.max_completion_tokens) ?? asNumber(body.max_tokens));
  put(request, 'temperature', asNumber(body.temperature));
  put(request, 'p', asNumber(body.top_p));
  put(request, 'seed', asNumber(body.seed));
  put(request, 'frequency_penalty', asNumber(body.frequency_penalty));
  put(request, 'presence_penalty', asNumber(body.presence_penalty));
  const stop = typeof body.stop === 'string' ? [body.stop] : asArray(body.stop).filter((s) => typeof s === 'string');
  if (stop.length > 0) request.stop_sequences = stop;
  put(request, 'response_format', responseFormat(body.response_format));
  return request;
}

function message(m: Json): Json {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text(m.content) };
    case 'assistant':
      return assistant(m);
    case 'tool':
      return { role: 'tool', tool_call_id: asString(m.tool_call_id) ?? '', content: text(m.content) };
    default:
      return { role: 'user', content: userContent(m.content) };
  }
}

function assistant(m: Json): Json {
  const out: Json = { role: 'assistant' };
  const calls = asArray(m.tool_calls)
    .filter(isObject)
    .map((call) => ({
      id: asString(call.id) ?? '',
      type: 'function',
      function: {
        name: asString(call.function?.name) ?? '',
        arguments: asString(call.function?.arguments) || '{}',
      },
    }));
  const content = text(m.content);
  if (calls.length > 0) {
    out.tool_calls = calls;
    put(out, 'tool_plan', asString(m.reasoning_content) || undefined);
  }
  if (content !== '') out.content = content;
  return out;
}

/** User content: a string, or text and image parts (Cohere's vision models take image_url parts). */
function userContent(content: unknown): string | Json[] {
  if (!Array.isArray(content)) return text(content);
  return content.filter(isObject).flatMap((part): Json[] => {
    if (part.type === 'text') return [{ type: 'text', text: asString(part.text) ?? '' }];
    const url = asString(part.image_url?.url) ?? asString(part.image_url);
    if (part.type === 'image_url' && url) return [{ type: 'image_url', image_url: { url } }];
    return [];
  });
}

/** Text of a content that may be a string or a list of text parts. */
function text(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (isObject(part) ? asString(part.text) : undefined))
    .filter((t): t is string => t !== undefined)
    .join('');
}

/** OpenAI tools → Cohere's (the same function shape); a named tool choice keeps only that tool, required. */
function toolsAndChoice(tools: unknown, choice: unknown): { tools?: Json[]; choice?: string } {
  let list = asArray(tools)
    .filter((tool) => isObject(tool) && tool.type === 'function' && isObject(tool.function))
    .map((tool) => {
      const fn: Json = { name: asString(tool.function.name) ?? '' };
      put(fn, 'description', asString(tool.function.description));
      fn.parameters = isObject(tool.function.parameters)
        ? tool.function.parameters
        : { type: 'object', properties: {} };
      return { type: 'function', function: fn };
    });
  if (list.length === 0) return {};
  if (choice === 'none') return { tools: list, choice: 'NONE' };
  if (choice === 'required') return { tools: list, choice: 'REQUIRED' };
  const named = isObject(choice) ? asString(choice.function?.name) : undefined;
  if (named) {
    list = list.filter((tool) => tool.function.name === named);
    return { tools: list, choice: 'REQUIRED' };
  }
  return { tools: list };
}

function responseFormat(format: unknown): Json | undefined {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema' && isObject(format.json_schema)) {
    const out: Json = { type: 'json_object' };
    put(out, 'json_schema', isObject(format.json_schema.schema) ? format.json_schema.schema : undefined);
    return out;
  }
  return undefined;
}

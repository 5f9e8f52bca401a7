import type { ConvertContext, Json } from '../../../convert/types.ts';
import { messageText } from '../../hub-request.ts';

const list = (value: unknown): any[] => (Array.isArray(value) ? value : []);

/**
 * A hub message as Spark's `{role, content}`: Spark knows system, user and assistant only, so a tool
 * result is given back as a user turn naming the call, and an assistant's call as its text.
 */
function messageToSpark(message: Json): Json {
  const content = messageText(message.content, '');
  if (message.role === 'tool')
    return { role: 'user', content: `Result of tool call ${String(message.tool_call_id ?? '')}: ${content}` };
  if (message.role === 'assistant') {
    const calls = list(message.tool_calls)
      .filter((call) => call?.function)
      .map((call) => `${call.function.name}(${call.function.arguments ?? ''})`);
    return { role: 'assistant', content: content || (calls.length > 0 ? `Called ${calls.join(', ')}` : '') };
  }
  return { role: message.role === 'developer' ? 'system' : String(message.role ?? 'user'), content };
}

/**
 * A hub request as a Spark request frame. The app id (from the key) and the domain (from the
 * channel's version) are filled in by the provider; `uid` names the end user when the client did.
 */
export function hubRequestToSpark(body: Json, _ctx: ConvertContext): Json {
  const chat: Json = {};
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') chat.max_tokens = maxTokens;
  if (typeof body.top_k === 'number') chat.top_k = body.top_k;
  const payload: Json = { message: { text: list(body.messages).map(messageToSpark) } };
  const functions = list(body.tools)
    .filter((tool) => tool?.type === 'function' && tool.function?.name)
    .map((tool) => ({
      name: tool.function.name,
      description: tool.function.description ?? '',
      parameters: tool.function.parameters ?? { type: 'object', properties: {} },
    }));
  if (functions.length > 0 && body.tool_choice !== 'none') payload.functions = { text: functions };
  return {
    header: { uid: typeof body.user === 'string' && body.user !== '' ? body.user.slice(0, 32) : 'tollgate' },
    parameter: { chat },
    payload,
  };
}

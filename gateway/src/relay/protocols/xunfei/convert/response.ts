import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubAnswer } from '../../hub-answer.ts';

const list = (value: unknown): any[] => (Array.isArray(value) ? value : []);

export function usageToHub(frame: Json): Json | undefined {
  const usage = frame.payload?.usage?.text;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const prompt = Number(usage.prompt_tokens) || 0;
  const completion = Number(usage.completion_tokens) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A Spark function call as a hub tool call (Spark gives calls no id: the session id and position make one). */
export function callToHub(call: Json, sid: string, n: number): Json {
  const args = call.arguments;
  return {
    id: `call_${sid}_${n}`,
    type: 'function',
    function: {
      name: String(call.name ?? ''),
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    },
  };
}

/** A whole Spark answer (its frames joined) as a hub chat completion. */
export function sparkResponseToHub(body: Json, ctx: ConvertContext): Json {
  const sid = String(body.header?.sid ?? '');
  const items = list(body.payload?.choices?.text);
  const content = items.map((item) => (typeof item?.content === 'string' ? item.content : '')).join('');
  const calls = items.filter((item) => item?.function_call).map((item, n) => callToHub(item.function_call, sid, n));
  const message: Json = { content };
  if (calls.length > 0) message.tool_calls = calls;
  return hubAnswer({
    id: `chatcmpl-${sid}`,
    model: ctx.model,
    message,
    finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
    usage: usageToHub(body),
  });
}

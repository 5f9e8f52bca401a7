import type { ConvertContext, Json } from '../../../convert/types.ts';

const list = (value: unknown): any[] => (Array.isArray(value) ? value : []);

/** Hunyuan's finish reasons in the hub's words (`sensitive`: the answer was cut by moderation). */
export function finishToHub(reason: unknown): string | null {
  if (typeof reason !== 'string' || reason === '') return null;
  if (reason === 'sensitive') return 'content_filter';
  return reason === 'tool_calls' || reason === 'length' ? reason : 'stop';
}

export function usageToHub(usage: unknown): Json | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Json;
  const prompt = Number(u.PromptTokens) || 0;
  const completion = Number(u.CompletionTokens) || 0;
  const out: Json = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const cached = Number(u.PromptTokensDetails?.CachedTokens) || 0;
  if (cached > 0) out.prompt_tokens_details = { cached_tokens: cached };
  return out;
}

export function toolCallsToHub(calls: unknown): Json[] {
  return list(calls)
    .filter((call) => call?.Function)
    .map((call, position) => ({
      index: typeof call.Index === 'number' ? call.Index : position,
      id: String(call.Id ?? ''),
      type: 'function',
      function: { name: String(call.Function.Name ?? ''), arguments: String(call.Function.Arguments ?? '') },
    }));
}

/** A whole ChatCompletions answer (`{Response: {...}}`) as a hub chat completion. */
export function tencentResponseToHub(body: Json, ctx: ConvertContext): Json {
  const answer: Json = body.Response ?? body;
  const choices = list(answer.Choices).map((choice, index) => {
    const message: Json = { role: 'assistant', content: String(choice?.Message?.Content ?? '') };
    if (typeof choice?.Message?.ReasoningContent === 'string' && choice.Message.ReasoningContent !== '') {
      message.reasoning_content = choice.Message.ReasoningContent;
    }
    const calls = toolCallsToHub(choice?.Message?.ToolCalls).map(({ index: _i, ...call }) => call);
    if (calls.length > 0) message.tool_calls = calls;
    return { index, message, finish_reason: finishToHub(choice?.FinishReason) ?? 'stop' };
  });
  const out: Json = {
    id: `chatcmpl-${answer.Id ?? answer.RequestId ?? ''}`,
    object: 'chat.completion',
    created: Number(answer.Created) || Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices,
  };
  const usage = usageToHub(answer.Usage);
  if (usage) out.usage = usage;
  return out;
}

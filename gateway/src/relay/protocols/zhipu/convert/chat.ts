import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import { HubChunks, type HubUsage, hubAnswer, hubError, hubUsage } from '../../hub-answer.ts';
import { messageText, systemText } from '../../hub-request.ts';
import { isObject } from '../../upstream-json.ts';

/**
 * Zhipu v3 model-api ↔ the hub. Its `prompt` holds user and assistant turns only (the system prompt
 * goes before the first user turn), `incremental` makes a stream send pieces rather than the text so
 * far; an answer is `{code, msg, success, data: {choices: [{role, content}], usage}}`.
 */
export const zhipuChatAdapter: UpstreamAdapter = {
  format: 'zhipu-v3',
  hub: 'openai-chat',
  requestFromHub,
  responseToHub,
  streamToHub: (ctx) => new ZhipuToHubStream(ctx),
};

function requestFromHub(body: Json): Json {
  const prompt: Json[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message) || message.role === 'system' || message.role === 'developer') continue;
    prompt.push({ role: message.role === 'assistant' ? 'assistant' : 'user', content: messageText(message.content) });
  }
  const system = systemText(body.messages);
  const first = prompt.find((turn) => turn.role === 'user');
  if (system && first) first.content = `${system}\n\n${first.content}`;
  else if (system) prompt.unshift({ role: 'user', content: system });
  const out: Json = { prompt, incremental: true };
  // v3 takes temperature in (0, 1] and top_p in (0, 1).
  if (typeof body.temperature === 'number') out.temperature = Math.min(Math.max(body.temperature, 0.01), 1);
  if (typeof body.top_p === 'number') out.top_p = Math.min(Math.max(body.top_p, 0.01), 0.99);
  return out;
}

function responseToHub(body: Json, ctx: ConvertContext): Json {
  const data = isObject(body.data) ? body.data : {};
  const choice = Array.isArray(data.choices) ? data.choices.find(isObject) : undefined;
  const content = typeof choice?.content === 'string' ? unquote(choice.content) : '';
  return hubAnswer({
    id: String(data.task_id ?? data.request_id ?? 'zhipu'),
    model: ctx.model,
    message: { content },
    usage: usageToHub(data.usage),
  });
}

/** v3 sends a whole answer's content as a JSON string literal (quoted, escaped); its text is inside. */
function unquote(content: string): string {
  if (!content.startsWith('"') || !content.endsWith('"') || content.length < 2) return content;
  try {
    const text: unknown = JSON.parse(content);
    return typeof text === 'string' ? text : content;
  } catch {
    return content;
  }
}

function usageToHub(usage: unknown): HubUsage | undefined {
  if (!isObject(usage)) return undefined;
  return hubUsage(Number(usage.prompt_tokens) || 0, Number(usage.completion_tokens) || 0);
}

/** Decoded Zhipu events (add / finish / meta / error) → hub chunks, usage from the meta. */
class ZhipuToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks(`zhipu-${Date.now()}`, ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    switch (event.event) {
      case 'add':
        return event.data === '' ? [] : [this.#chunks.delta({ content: event.data })];
      case 'finish': {
        const events = event.data === '' ? [] : [this.#chunks.delta({ content: event.data })];
        return [...events, this.#chunks.delta({}, 'stop')];
      }
      case 'meta': {
        const usage = usageToHub((parsedData(event) as { usage?: unknown } | null | undefined)?.usage);
        return usage ? [this.#chunks.usage(usage)] : [];
      }
      case 'error':
      case 'interrupted': {
        return [hubError(event.data || `Zhipu stream ${event.event}`, event.event, 'zhipu_error')];
      }
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return [];
  }
}

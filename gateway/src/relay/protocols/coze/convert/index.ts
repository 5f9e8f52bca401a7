import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, hubAnswer, hubUsage } from '../../hub-answer.ts';
import { imageUrls, messageText, refuseTools } from '../../hub-request.ts';
import { eventJson } from '../../upstream-json.ts';
import { isAnswer } from '../stream.ts';
import { cozeChatUsage } from '../usage.ts';

/**
 * OpenAI chat (the hub) ↔ Coze v3 chat. The user and assistant turns go as `additional_messages`
 * (text, or text and image URLs); system prompts are dropped — the bot's persona is configured in Coze. The bot runs its own
 * plugins and workflows, so a request's tools are refused. A conversation continues when the client
 * passes Coze's `conversation_id` (body field or `metadata.conversation_id`); answers and stream chunks
 * carry Coze's `conversation_id` back beside OpenAI's fields.
 */
export const cozeAdapter: UpstreamAdapter = {
  format: 'coze-chat',
  hub: 'openai-chat',
  requestFromHub,
  responseToHub,
  streamToHub: (ctx) => new CozeToHubStream(ctx),
};

function requestFromHub(body: Json, ctx: ConvertContext): Json {
  refuseTools(body, 'A Coze bot');
  const messages = (Array.isArray(body.messages) ? body.messages : [])
    .filter((m: Json) => m?.role === 'user' || m?.role === 'assistant')
    .map(cozeMessage)
    .filter((m: Json) => m.content !== '');
  if (!messages.some((m: Json) => m.role === 'user')) throw new Error('the request has no user message to send');
  const conversation = body.conversation_id ?? body.metadata?.conversation_id;
  return {
    bot_id: ctx.upstreamModel,
    ...(typeof body.user === 'string' && body.user !== '' ? { user_id: body.user } : {}),
    additional_messages: messages,
    stream: ctx.stream,
    auto_save_history: true,
    ...(typeof conversation === 'string' && conversation !== '' ? { conversation_id: conversation } : {}),
  };
}

/**
 * One turn as Coze takes it: plain text, or with images an `object_string` (a JSON list of text and
 * image parts, images by URL — Coze fetches them itself).
 */
function cozeMessage(message: Json): Json {
  const text = messageText(message.content);
  const images = imageUrls(message.content);
  const turn = { role: message.role, ...(message.role === 'assistant' ? { type: 'answer' } : {}) };
  if (images.length === 0) return { ...turn, content: text, content_type: 'text' };
  const parts = images.map((url) => {
    if (!/^https?:\/\//i.test(url)) throw new Error('Coze takes images by http(s) URL only');
    return { type: 'image', file_url: url };
  });
  return {
    ...turn,
    content: JSON.stringify([...(text ? [{ type: 'text', text }] : []), ...parts]),
    content_type: 'object_string',
  };
}

/** `{chat, messages}` (the polled chat and its messages) → a hub answer of the bot's answer messages. */
function responseToHub(body: Json, ctx: ConvertContext): Json {
  const chat: Json = body.chat ?? {};
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const usage = cozeChatUsage(chat);
  return hubAnswer({
    id: `chatcmpl-${chat.id ?? crypto.randomUUID().replaceAll('-', '')}`,
    model: ctx.model,
    message: {
      content: messages
        .filter(isAnswer)
        .map((m) => (typeof m.content === 'string' ? m.content : ''))
        .join(''),
    },
    usage: usage ? hubUsage(usage.promptTokens, usage.completionTokens) : undefined,
    extra: typeof chat.conversation_id === 'string' ? { conversation_id: chat.conversation_id } : {},
  });
}

/** Coze stream events → hub chunks: answer deltas as text (reasoning deltas as reasoning), usage at the end. */
class CozeToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #chunks: HubChunks | undefined;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    const data = eventJson(event) ?? {};
    const chunks = this.#started(data);
    switch (event.event) {
      case 'conversation.message.delta':
        if (!isAnswer(data)) return [];
        return [
          ...(typeof data.reasoning_content === 'string' ? chunks.reasoning(data.reasoning_content) : []),
          ...(typeof data.content === 'string' ? chunks.text(data.content) : []),
        ];
      case 'conversation.chat.completed': {
        const usage = cozeChatUsage(data);
        return chunks.finish(usage ? hubUsage(usage.promptTokens, usage.completionTokens) : undefined);
      }
      case 'conversation.chat.failed':
        return chunks.error(data.last_error?.msg ?? 'the Coze chat failed', String(data.last_error?.code ?? ''));
      case 'conversation.chat.requires_action':
        return chunks.error('the bot asked the client to run a tool, which a gateway client cannot answer', null);
      case 'error':
        return chunks.error(typeof data.msg === 'string' ? data.msg : 'Coze stream error', String(data.code ?? ''));
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return this.#chunks?.finish(undefined) ?? [];
  }

  #started(data: Json): HubChunks {
    if (!this.#chunks) {
      const id = data.chat_id ?? data.id ?? crypto.randomUUID().replaceAll('-', '');
      this.#chunks = new HubChunks(`chatcmpl-${id}`, this.#ctx.model);
    }
    if (typeof data.conversation_id === 'string' && data.conversation_id !== '') {
      this.#chunks.carry({ conversation_id: data.conversation_id });
    }
    return this.#chunks;
  }
}

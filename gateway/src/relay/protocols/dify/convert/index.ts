import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, type HubUsage, hubAnswer, hubUsage } from '../../hub-answer.ts';
import { imageUrls, lastUserMessage, messageText, refuseTools } from '../../hub-request.ts';
import { eventJson } from '../../upstream-json.ts';
import { workflowFailure, workflowText } from '../outputs.ts';
import { difyMessageUsage, difyWorkflowUsage } from '../usage.ts';

/**
 * OpenAI chat (the hub) ↔ Dify's app API. A Dify app keeps its own conversation memory, so only the
 * last user message goes up as the `query`; earlier messages and system prompts are the app's concern
 * (its prompt and memory), not resent. A conversation continues when the client passes Dify's
 * `conversation_id` (body field, or `metadata.conversation_id`); every answer and stream chunk carries
 * Dify's `conversation_id` back as an extra field beside OpenAI's. Images go as `remote_url` files.
 */
export const difyAdapter: UpstreamAdapter = {
  format: 'dify-chat',
  hub: 'openai-chat',
  requestFromHub,
  responseToHub,
  streamToHub: (ctx) => new DifyToHubStream(ctx),
};

function requestFromHub(body: Json, ctx: ConvertContext): Json {
  refuseTools(body, 'A Dify app');
  const message = lastUserMessage(body);
  const files = imageUrls(message.content).map((url) => {
    if (!/^https?:\/\//i.test(url))
      throw new Error('Dify takes images by http(s) URL only; upload the file to Dify first');
    return { type: 'image', transfer_method: 'remote_url', url };
  });
  const conversation = body.conversation_id ?? body.metadata?.conversation_id;
  return {
    inputs: body.inputs && typeof body.inputs === 'object' ? body.inputs : {},
    query: messageText(message.content),
    response_mode: ctx.stream ? 'streaming' : 'blocking',
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    ...(typeof conversation === 'string' && conversation !== '' ? { conversation_id: conversation } : {}),
    ...(files.length > 0 ? { files } : {}),
  };
}

const toHubUsage = (usage: { promptTokens: number; completionTokens: number } | undefined): HubUsage | undefined =>
  usage ? hubUsage(usage.promptTokens, usage.completionTokens) : undefined;

const completionId = (id: unknown) =>
  `chatcmpl-${typeof id === 'string' && id !== '' ? id : crypto.randomUUID().replaceAll('-', '')}`;

/** A blocking answer: a chat app's message, or a workflow run's outputs. */
function responseToHub(body: Json, ctx: ConvertContext): Json {
  if (body.data && typeof body.data === 'object') {
    return hubAnswer({
      id: completionId(body.workflow_run_id),
      model: ctx.model,
      message: { content: workflowText(body.data.outputs) },
      usage: toHubUsage(difyWorkflowUsage(body.data)),
    });
  }
  return hubAnswer({
    id: completionId(body.message_id ?? body.id),
    model: ctx.model,
    message: { content: typeof body.answer === 'string' ? body.answer : '' },
    usage: toHubUsage(difyMessageUsage(body.metadata)),
    extra: typeof body.conversation_id === 'string' ? { conversation_id: body.conversation_id } : {},
  });
}

/**
 * A Dify stream → hub chunks. Agent thoughts (tool traces) are not forwarded: only the answer text.
 * A chatflow streams workflow events and then message_end: the finish waits for message_end unless
 * no message came at all (a workflow app), when workflow_finished ends the answer.
 */
class DifyToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #chunks: HubChunks | undefined;
  #texts = 0;
  #messages = false;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    const data = eventJson(event);
    if (!data) return [];
    const chunks = this.#started(data);
    switch (data.event) {
      case 'message':
      case 'agent_message':
        this.#messages = true;
        return this.#text(chunks, data.answer);
      case 'text_chunk':
        return this.#text(chunks, data.data?.text);
      case 'message_end':
        return chunks.finish(toHubUsage(difyMessageUsage(data.metadata)));
      case 'workflow_finished': {
        if (data.data?.status === 'failed' || data.data?.status === 'stopped') {
          return chunks.error(workflowFailure(data.data), `workflow_${data.data.status}`);
        }
        if (this.#messages) return [];
        const text = this.#texts === 0 ? chunks.text(workflowText(data.data?.outputs)) : [];
        return [...text, ...chunks.finish(toHubUsage(difyWorkflowUsage(data.data)))];
      }
      case 'error':
        return chunks.error(
          typeof data.message === 'string' ? data.message : 'Dify stream error',
          typeof data.code === 'string' ? data.code : null,
        );
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return this.#chunks?.finish(undefined) ?? [];
  }

  #started(data: Json): HubChunks {
    if (!this.#chunks) {
      this.#chunks = new HubChunks(completionId(data.message_id ?? data.workflow_run_id), this.#ctx.model);
    }
    if (typeof data.conversation_id === 'string' && data.conversation_id !== '') {
      this.#chunks.carry({ conversation_id: data.conversation_id });
    }
    return this.#chunks;
  }

  #text(chunks: HubChunks, text: unknown): SseEvent[] {
    if (typeof text !== 'string' || text === '') return [];
    this.#texts++;
    return chunks.text(text);
  }
}

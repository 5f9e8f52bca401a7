import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import type { BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';

/**
 * The bot a request talks to: the model name when it is a bot id (Coze's are digits), else the
 * channel's `other` (a default bot, new-api's place for it) — so a channel may list its bot ids as
 * models, or list friendly names mapped to bots, or one name and the bot in `other`.
 */
export function cozeBotId(upstreamModel: string, other: string): string {
  return /^\d+$/.test(upstreamModel) || other.trim() === '' ? upstreamModel : other.trim();
}

/** Finishes a v3 chat body: its bot, and the end user (the client's `user`, else the Tollgate user). */
export function prepareCozeBody(body: Json, context: ProviderContext): Json {
  const user =
    typeof body.user_id === 'string' && body.user_id !== ''
      ? body.user_id
      : context.userId === undefined
        ? 'tollgate'
        : `tollgate-user-${context.userId}`;
  return { ...body, bot_id: cozeBotId(context.upstreamModel, context.channel.other), user_id: user };
}

/** The conversation a body continues, which Coze wants in the query string rather than in the body. */
function conversationOf(body: Json | undefined): string | undefined {
  const conversation = body?.conversation_id;
  return typeof conversation === 'string' && conversation !== '' ? conversation : undefined;
}

/** The body without the conversation, which buildCozeRequest puts in the query string. */
export function finishCozeBody(body: Json): Json {
  if (conversationOf(body) === undefined) return body;
  const { conversation_id: _conversation, ...rest } = body;
  return rest;
}

/** `POST {base}/v3/chat`, a conversation to continue named in the query string as Coze wants it. */
export function buildCozeRequest(input: BuildInput): UpstreamRequest {
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const conversation = conversationOf(input.json);
  return {
    url: `${base}/v3/chat${conversation === undefined ? '' : `?conversation_id=${encodeURIComponent(conversation)}`}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.key}` },
    body: input.body,
  };
}

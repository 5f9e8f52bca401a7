import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import type { BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';
import { difyAppKind, difyPath } from './app.ts';

/**
 * Finishes a chat-messages body for the channel's app: the end user Dify keeps conversations for (the
 * client's `user`, else the Tollgate user), agent apps always streamed (they refuse blocking mode),
 * workflow apps given the query as an input (they take inputs only, and have no conversations).
 */
export function prepareDifyBody(body: Json, context: ProviderContext): Json {
  const kind = difyAppKind(context.channel);
  const user =
    typeof body.user === 'string' && body.user !== ''
      ? body.user
      : context.userId === undefined
        ? 'tollgate'
        : `tollgate-user-${context.userId}`;
  if (kind === 'workflow') {
    const { query, conversation_id: _conversation, inputs, ...rest } = body;
    return { ...rest, inputs: { ...inputs, query }, user };
  }
  return { ...body, user, ...(kind === 'agent' ? { response_mode: 'streaming' } : {}) };
}

/** The app's endpoint, and whether the body asks for a stream (an agent app's always does). */
export function buildDifyRequest(input: BuildInput): UpstreamRequest {
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  return {
    url: `${base}${difyPath(difyAppKind(input.channel))}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.key}` },
    body: input.body,
    asksForStream: input.json?.response_mode === 'streaming',
  };
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Json } from '../../convert/types.ts';
import type { UpstreamResponse } from '../../transport.ts';
import { jsonAnswer } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { cozeStatus } from './errors.ts';

/** Longest a non-streamed chat is polled before giving up (Coze bots with tools can take minutes). */
export const COZE_MAX_WAIT_MS = 5 * 60_000;

/**
 * Sends a v3 chat. Streamed, it is one call. Not streamed, Coze answers at once with a chat still
 * in progress: the chat is polled (retrieve) until it completes, then its messages are listed, and the
 * answer is `{chat, messages}` (what the official client's createAndPoll returns). Coze reports many
 * errors as HTTP 200 with a non-zero `code`: those become error answers with the matching status.
 */
export async function sendCoze(
  request: UpstreamRequest,
  input: SendInput,
  maxWaitMs = COZE_MAX_WAIT_MS,
): Promise<UpstreamResponse> {
  const { transport, signal } = input;
  const response = await transport.send(request, signal);
  const isJson = String(response.headers['content-type'] ?? '').includes('application/json');
  if (response.status >= 400 || !isJson) return response;
  const created = (await response.body.json()) as Json;
  if (created.code !== 0) return failed(created, response.status);
  if (input.stream) return jsonAnswer(502, { code: -1, msg: 'Coze answered a stream request without a stream' });

  const get = async (path: string, ids: Json): Promise<Json> => {
    const url = new URL(request.url);
    url.pathname = url.pathname.replace(/\/v3\/chat$/, path);
    url.search = new URLSearchParams({ conversation_id: ids.conversation_id, chat_id: ids.id }).toString();
    const answer = await transport.send(
      { url: url.toString(), method: 'GET', headers: { authorization: request.headers.authorization ?? '' } },
      signal,
    );
    const text = await answer.body.text();
    try {
      return { status: answer.status, ...(JSON.parse(text) as Json) };
    } catch {
      return { status: answer.status, code: -1, msg: text.slice(0, 1000) || `HTTP ${answer.status}` };
    }
  };

  let chat: Json = created.data ?? {};
  const deadline = Date.now() + maxWaitMs;
  for (let delay = 100; !['completed', 'failed', 'requires_action', 'canceled'].includes(chat.status); ) {
    if (Date.now() + delay > deadline) {
      return jsonAnswer(504, { code: -1, msg: `the Coze chat did not complete within ${maxWaitMs / 1000}s` });
    }
    await sleep(delay, undefined, { signal });
    delay = Math.min(delay * 2, 1000);
    const retrieved = await get('/v3/chat/retrieve', chat);
    if (retrieved.code !== 0) return failed(retrieved, retrieved.status);
    chat = retrieved.data ?? {};
  }
  if (chat.status !== 'completed') {
    const reason =
      chat.status === 'requires_action'
        ? 'the bot asked the client to run a tool, which a gateway client cannot answer'
        : (chat.last_error?.msg ?? `the chat ended ${chat.status}`);
    return jsonAnswer(502, { code: chat.last_error?.code ?? -1, msg: reason });
  }
  const listed = await get('/v3/chat/message/list', chat);
  if (listed.code !== 0) return failed(listed, listed.status);
  return jsonAnswer(200, { chat, messages: Array.isArray(listed.data) ? listed.data : [] });
}

function failed(body: Json, httpStatus: number): UpstreamResponse {
  const { status: _status, ...error } = body;
  return jsonAnswer(cozeStatus(Number(body.code), httpStatus), error);
}

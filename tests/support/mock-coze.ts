import { randomInt } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Coze open API (v3 chat): `POST /v3/chat` streamed as `event:`/`data:` lines, or answered at
 * once with a chat in progress that `/v3/chat/retrieve` reports completed after a few polls, its
 * messages at `/v3/chat/message/list`. Like Coze it refuses a bad token with HTTP 401 and code 4100,
 * and other mistakes (unknown bot, missing user, bad messages, unknown conversation) with HTTP 200
 * and a non-zero `code` and `msg` — the way Coze reports most errors.
 */
export interface RecordedCozeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MockCozeBehaviour {
  reply?: string;
  usage?: { input_count: number; output_count: number };
  /** Retrieves that still report in_progress before the chat completes; default 2. */
  pollsUntilDone?: number;
  /** The chat fails with this message (conversation.chat.failed / status failed). */
  failChat?: string;
}

export interface MockCoze {
  url: string;
  requests: RecordedCozeRequest[];
  behaviour: MockCozeBehaviour;
  close(): Promise<void>;
}

interface Chat {
  id: string;
  conversation_id: string;
  bot_id: string;
  user_id: string;
  created_at: number;
  reply: string;
  input: string;
  polls: number;
}

const DEFAULT_REPLY = 'Hello from the Coze bot.';

export async function startMockCoze(options: { tokens: string[]; bots: string[] }): Promise<MockCoze> {
  const requests: RecordedCozeRequest[] = [];
  const chats = new Map<string, Chat>();
  const conversations = new Set<string>();
  const state: MockCoze = { url: '', requests, behaviour: {}, close: async () => {} };

  const usageOf = (chat: Chat) => {
    const input = state.behaviour.usage?.input_count ?? Math.ceil(chat.input.length / 4) + 30;
    const output = state.behaviour.usage?.output_count ?? Math.ceil(chat.reply.length / 4);
    return { token_count: input + output, output_count: output, input_count: input };
  };
  const chatView = (chat: Chat, status: string) => ({
    id: chat.id,
    conversation_id: chat.conversation_id,
    bot_id: chat.bot_id,
    created_at: chat.created_at,
    ...(status === 'completed' || status === 'failed' ? { completed_at: now() } : {}),
    last_error:
      state.behaviour.failChat && status === 'failed'
        ? { code: 5000, msg: state.behaviour.failChat }
        : { code: 0, msg: '' },
    status,
    ...(status === 'completed' ? { usage: usageOf(chat) } : {}),
    section_id: chat.conversation_id,
  });
  const message = (chat: Chat, type: string, content: string) => ({
    id: id(),
    conversation_id: chat.conversation_id,
    bot_id: chat.bot_id,
    chat_id: chat.id,
    role: 'assistant',
    type,
    content,
    content_type: 'text',
    created_at: now(),
    updated_at: now(),
    section_id: chat.conversation_id,
  });

  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-tt-logid': 'mock-log-id' });
      res.end(JSON.stringify(value));
    };
    const refuse = (code: number, msg: string) => json(200, { code, msg, detail: { logid: 'mock-log-id' } });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !options.tokens.includes(token)) {
      return json(401, {
        code: 4100,
        msg: 'authentication is invalid. Please check that the token you entered is correct.',
        detail: { logid: 'mock-log-id' },
      });
    }
    let body: any = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return refuse(4000, 'The request body is not valid JSON.');
      }
    }
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
    });
    const chatOf = () => {
      const chat = chats.get(url.searchParams.get('chat_id') ?? '');
      return chat && chat.conversation_id === url.searchParams.get('conversation_id') ? chat : undefined;
    };

    if (url.pathname === '/v3/chat/retrieve') {
      const chat = chatOf();
      if (!chat) return refuse(4200, 'The chat does not exist.');
      chat.polls++;
      const done = chat.polls > (state.behaviour.pollsUntilDone ?? 2);
      const status = done ? (state.behaviour.failChat ? 'failed' : 'completed') : 'in_progress';
      return json(200, { code: 0, msg: '', data: chatView(chat, status) });
    }
    if (url.pathname === '/v3/chat/message/list') {
      const chat = chatOf();
      if (!chat) return refuse(4200, 'The chat does not exist.');
      return json(200, {
        code: 0,
        msg: '',
        data: [
          message(chat, 'answer', chat.reply),
          message(chat, 'verbose', JSON.stringify({ msg_type: 'generate_answer_finish', data: '' })),
          message(chat, 'follow_up', 'Anything else?'),
        ],
      });
    }
    if (url.pathname !== '/v3/chat' || req.method !== 'POST') return json(404, { code: 4200, msg: 'Not found' });

    if (typeof body.bot_id !== 'string' || !options.bots.includes(body.bot_id)) {
      return refuse(4200, `The bot ${body.bot_id} does not exist or is not published as an API.`);
    }
    if (typeof body.user_id !== 'string' || body.user_id === '') return refuse(4000, 'user_id is required.');
    const messages = body.additional_messages;
    const valid =
      Array.isArray(messages) &&
      messages.every(
        (m: any) =>
          (m.role === 'user' || m.role === 'assistant') &&
          typeof m.content === 'string' &&
          ['text', 'object_string', 'card'].includes(m.content_type) &&
          (m.content_type !== 'object_string' || validParts(m.content)),
      );
    if (!valid) return refuse(4000, 'additional_messages is invalid.');
    if (body.stream !== true && body.auto_save_history === false) {
      return refuse(4000, 'auto_save_history must be true when stream is false.');
    }
    let conversation = url.searchParams.get('conversation_id');
    if (conversation && !conversations.has(conversation)) return refuse(4200, 'The conversation does not exist.');
    conversation ??= id();
    conversations.add(conversation);
    const chat: Chat = {
      id: id(),
      conversation_id: conversation,
      bot_id: body.bot_id,
      user_id: body.user_id,
      created_at: now(),
      reply: state.behaviour.reply ?? DEFAULT_REPLY,
      input: messages.map((m: any) => m.content).join(' '),
      polls: 0,
    };
    chats.set(chat.id, chat);
    if (body.stream !== true) return json(200, { code: 0, msg: '', data: chatView(chat, 'in_progress') });

    const events: Array<[string, unknown]> = [
      ['conversation.chat.created', chatView(chat, 'created')],
      ['conversation.chat.in_progress', chatView(chat, 'in_progress')],
    ];
    const answerId = id();
    for (const piece of chat.reply.match(/.{1,4}/gs) ?? []) {
      events.push(['conversation.message.delta', { ...message(chat, 'answer', piece), id: answerId }]);
    }
    if (state.behaviour.failChat) {
      events.push(['conversation.chat.failed', chatView(chat, 'failed')]);
    } else {
      events.push(['conversation.message.completed', { ...message(chat, 'answer', chat.reply), id: answerId }]);
      events.push([
        'conversation.message.completed',
        message(chat, 'verbose', JSON.stringify({ msg_type: 'generate_answer_finish', data: '' })),
      ]);
      events.push(['conversation.chat.completed', chatView(chat, 'completed')]);
    }
    events.push(['done', '[DONE]']);
    await stream(res, events);
  });
  state.url = server.url;
  state.close = server.close;
  return state;
}

/** An object_string message: a JSON list of text parts and file/image parts named by file_url or file_id. */
function validParts(content: string): boolean {
  try {
    const parts = JSON.parse(content);
    return (
      Array.isArray(parts) &&
      parts.every(
        (p) =>
          (p.type === 'text' && typeof p.text === 'string') ||
          (['image', 'file', 'audio'].includes(p.type) &&
            (typeof p.file_url === 'string' || typeof p.file_id === 'string')),
      )
    );
  } catch {
    return false;
  }
}

const now = () => Math.floor(Date.now() / 1000);
/** Coze ids are 19-digit numbers sent as strings. */
const id = () => `74${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e8)).padStart(8, '0')}`;

async function stream(res: ServerResponse, events: Array<[string, unknown]>) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, value] of events) {
    const text = `event:${event}\ndata:${JSON.stringify(value)}\n\n`;
    const cut = Math.floor(text.length / 3);
    res.write(text.slice(0, cut));
    res.write(text.slice(cut));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

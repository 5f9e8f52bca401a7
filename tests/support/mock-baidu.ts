import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Baidu ERNIE v1 (wenxinworkshop) as its documentation describes it: access tokens only from
 * `POST /oauth/2.0/token?grant_type=client_credentials&client_id=…&client_secret=…` for a registered
 * API key and its secret (`{"error":"invalid_client",…}` with 401 otherwise); the API only with a
 * token it issued (`?access_token=`), refusing others with HTTP 200 and `{"error_code":110|111,…}`;
 * one path per model; messages alternating user/assistant and odd in number; answers as a whole or
 * as SSE events `{result, is_end, usage}`.
 */
export interface RecordedBaiduRequest {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface BaiduBehaviour {
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** The function call made when `functions` are offered; default get_weather {"city":"Paris"}. */
  functionCall?: { name: string; arguments: string };
}

export interface MockBaidu {
  url: string;
  requests: RecordedBaiduRequest[];
  behaviour: BaiduBehaviour;
  /** Tokens issued so far (how many times the token endpoint granted one). */
  readonly tokensIssued: number;
  /** Makes every issued token expired: the API answers error 111 until a new one is fetched. */
  expireTokens(): void;
  close(): Promise<void>;
}

/** The chat endpoints the mock serves (the real service has more; these are the registry's). */
const CHAT_ENDPOINTS = new Set([
  'completions_pro',
  'completions',
  'ernie_speed',
  'ernie-lite-8k',
  'ernie-4.0-turbo-8k',
]);
const CHAT_PREFIX = '/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/';
const EMBEDDINGS_PATH = '/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/embedding-v1';

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockBaidu(credentials: Record<string, string>): Promise<MockBaidu> {
  const requests: RecordedBaiduRequest[] = [];
  const live = new Set<string>();
  const expired = new Set<string>();
  let issued = 0;
  let behaviour: BaiduBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      body = raw.toString();
    }
    requests.push({ path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (url.pathname === '/oauth/2.0/token' && req.method === 'POST') {
      const q = url.searchParams;
      if (q.get('grant_type') !== 'client_credentials') {
        return json(res, 400, { error: 'unsupported_grant_type', error_description: 'unsupported grant type' });
      }
      const secret = credentials[q.get('client_id') ?? ''];
      if (secret === undefined)
        return json(res, 401, { error: 'invalid_client', error_description: 'unknown client id' });
      if (secret !== q.get('client_secret')) {
        return json(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
      }
      const token = `24.${randomBytes(16).toString('hex')}.2592000.${Math.floor(Date.now() / 1000)}.282335-mock`;
      live.add(token);
      issued++;
      return json(res, 200, {
        refresh_token: `25.${randomBytes(16).toString('hex')}`,
        expires_in: 2592000,
        session_key: 'mock-session',
        access_token: token,
        scope: 'public brain_all_scope wenxinworkshop_mgr',
        session_secret: 'mock-secret',
      });
    }
    const token = url.searchParams.get('access_token') ?? '';
    if (expired.has(token)) return json(res, 200, { error_code: 111, error_msg: 'Access token expired' });
    if (!live.has(token)) {
      return json(res, 200, { error_code: 110, error_msg: 'Access token invalid or no longer valid' });
    }
    if (url.pathname === EMBEDDINGS_PATH) return embeddings(res, body);
    if (url.pathname.startsWith(CHAT_PREFIX) && CHAT_ENDPOINTS.has(url.pathname.slice(CHAT_PREFIX.length))) {
      return chat(behaviour, res, body);
    }
    return json(res, 200, { error_code: 3, error_msg: 'Unsupported openapi method' });
  });
  return {
    ...server,
    requests,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: BaiduBehaviour) {
      behaviour = value;
    },
    get tokensIssued() {
      return issued;
    },
    expireTokens() {
      for (const token of live) expired.add(token);
      live.clear();
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json;charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Baidu's rule: turns alternate user / assistant (function results answer a function call), odd in number. */
function messagesError(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return 'the messages is empty';
  if (messages.length % 2 === 0) return 'the length of messages must be an odd number';
  for (const [i, m] of messages.entries()) {
    const expected = i % 2 === 0 ? ['user', 'function'] : ['assistant'];
    if (!expected.includes(m?.role)) {
      return `the role of message with ${i % 2 === 0 ? 'even' : 'odd'} index in the messages must be ${expected[0]}`;
    }
    if (typeof m.content !== 'string') return 'the content of message must be a string';
  }
  return undefined;
}

async function chat(b: BaiduBehaviour, res: ServerResponse, body: any) {
  const invalid = messagesError(body?.messages);
  if (invalid) return json(res, 200, { error_code: 336006, error_msg: invalid });
  if ('model' in (body ?? {})) return json(res, 200, { error_code: 336003, error_msg: 'model is not a valid field' });
  const id = `as-${randomBytes(5).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const call =
    Array.isArray(body.functions) && body.functions.length && body.messages.at(-1)?.role !== 'function'
      ? (b.functionCall ?? { name: body.functions[0].name, arguments: '{"city":"Paris"}' })
      : undefined;
  const reply = call ? '' : (b.reply ?? 'Hello from ERNIE.');
  const usage = {
    prompt_tokens: b.usage?.prompt_tokens ?? tokens(JSON.stringify(body.messages)),
    completion_tokens: b.usage?.completion_tokens ?? tokens(reply),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const common = { id, object: 'chat.completion', created, is_truncated: false, need_clear_history: false };
  if (!body.stream) {
    return json(res, 200, {
      ...common,
      result: reply,
      finish_reason: call ? 'function_call' : 'normal',
      ...(call ? { function_call: { ...call, thoughts: 'I should look up the weather.' } } : {}),
      usage,
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const pieces = call ? [''] : (reply.match(/.{1,6}/gs) ?? ['']);
  for (const [i, piece] of pieces.entries()) {
    const last = i === pieces.length - 1;
    // Until the end the completion count is the text so far; the last event carries the totals.
    const sofar = last ? usage.completion_tokens : tokens(pieces.slice(0, i + 1).join(''));
    const event = {
      ...common,
      sentence_id: i,
      is_end: last,
      result: piece,
      ...(last && call ? { function_call: call, finish_reason: 'function_call' } : {}),
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: sofar,
        total_tokens: usage.prompt_tokens + sofar,
      },
    };
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  res.end();
}

function embeddings(res: ServerResponse, body: any) {
  const input = body?.input;
  if (!Array.isArray(input) || input.some((text) => typeof text !== 'string')) {
    return json(res, 200, { error_code: 336003, error_msg: 'input must be a list of strings' });
  }
  const prompt = input.reduce((sum: number, text: string) => sum + tokens(text), 0);
  return json(res, 200, {
    id: `as-${randomBytes(5).toString('hex')}`,
    object: 'embedding_list',
    created: Math.floor(Date.now() / 1000),
    data: input.map((text: string, index: number) => ({
      object: 'embedding',
      embedding: [text.length / 100, 0.5, -0.25],
      index,
    })),
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  });
}

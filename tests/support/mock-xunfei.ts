import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * A local Xunfei Spark endpoint: the chat WebSocket of each version path. Like the real gateway it
 * checks the signed URL before upgrading — the `authorization` decodes to the api_key, algorithm,
 * headers and an HMAC-SHA256 signature recomputed here with that key's APISecret over host, date and
 * request line; a date more than five minutes off is refused — and refuses with HTTP 401 and
 * `{"message": …}` (for a plain GET too). Over the socket it checks the frame (app id of the key,
 * the version's domain, the messages) and answers in frames, `header.status` 0/1/2, usage in the last;
 * a refused frame is one error frame (`header.code` ≠ 0), then the socket closes.
 */
export interface MockXunfeiBehaviour {
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  functionArgs?: Record<string, unknown>;
}

export interface XunfeiCredential {
  appId: string;
  apiSecret: string;
}

export interface MockXunfei {
  /** http://127.0.0.1:port: the channel's base URL (dialled as ws://). */
  url: string;
  behaviour: MockXunfeiBehaviour;
  /** Frames received, with the path they came on. */
  frames: Array<{ path: string; frame: any }>;
  close(): Promise<void>;
}

const DOMAINS: Record<string, string> = {
  '/v1.1/chat': 'lite',
  '/v2.1/chat': 'generalv2',
  '/v3.1/chat': 'generalv3',
  '/v3.5/chat': 'generalv3.5',
  '/v4.0/chat': '4.0Ultra',
  '/chat/pro-128k': 'pro-128k',
  '/chat/max-32k': 'max-32k',
};

/** The refusal of a signed URL, or the api key it was signed with. */
function verify(
  req: IncomingMessage,
  credentials: Map<string, XunfeiCredential>,
): { apiKey: string } | { refusal: string } {
  const url = new URL(req.url ?? '/', 'http://mock');
  const authorization = url.searchParams.get('authorization');
  const date = url.searchParams.get('date');
  const host = url.searchParams.get('host');
  if (!authorization || !date || !host) return { refusal: 'HMAC signature cannot be verified' };
  const when = Date.parse(date);
  if (!Number.isFinite(when) || Math.abs(Date.now() - when) > 300_000) {
    return {
      refusal: 'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
    };
  }
  const fields = Object.fromEntries(
    [
      ...Buffer.from(authorization, 'base64')
        .toString('utf8')
        .matchAll(/(\w+)="([^"]*)"/g),
    ].map((m) => [m[1], m[2]]),
  );
  const credential = credentials.get(fields.api_key ?? '');
  if (!credential || fields.algorithm !== 'hmac-sha256' || fields.headers !== 'host date request-line') {
    return { refusal: 'HMAC signature cannot be verified' };
  }
  const signed = `host: ${host}\ndate: ${date}\nGET ${url.pathname} HTTP/1.1`;
  const expected = createHmac('sha256', credential.apiSecret).update(signed).digest('base64');
  if (expected !== fields.signature || host !== req.headers.host) return { refusal: 'HMAC signature does not match' };
  return { apiKey: fields.api_key! };
}

/** `credentials`: APIKey → its APPID and APISecret. */
export async function startMockXunfei(credentials: Record<string, XunfeiCredential>): Promise<MockXunfei> {
  const keys = new Map(Object.entries(credentials));
  const state = { behaviour: {} as MockXunfeiBehaviour };
  const frames: MockXunfei['frames'] = [];
  const refuse = (res: ServerResponse | Socket, status: number, message: string) => {
    const body = JSON.stringify({ message });
    const head = `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Not Found'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
    if ('writeHead' in res) {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(body);
    } else res.end(head + body);
  };
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://mock').pathname;
    if (!DOMAINS[path]) return refuse(res, 404, 'no Route matched with those values');
    const checked = verify(req, keys);
    if ('refusal' in checked) return refuse(res, 401, checked.refusal);
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('Upgrade Required');
  });
  server.on('upgrade', (req, socket: Socket, head) => {
    const path = new URL(req.url ?? '/', 'http://mock').pathname;
    if (!DOMAINS[path]) return refuse(socket, 404, 'no Route matched with those values');
    const checked = verify(req, keys);
    if ('refusal' in checked) return refuse(socket, 401, checked.refusal);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.once('message', (data) => answer(ws, path, checked.apiKey, String(data)));
    });
  });

  function answer(ws: WebSocket, path: string, apiKey: string, text: string) {
    const sid = `cht000${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const fail = (code: number, message: string) => {
      ws.send(JSON.stringify({ header: { code, message, sid, status: 2 } }));
      ws.close();
    };
    let frame: any;
    try {
      frame = JSON.parse(text);
    } catch {
      return fail(10163, 'the request is not valid JSON');
    }
    frames.push({ path, frame });
    if (frame.header?.app_id !== keys.get(apiKey)?.appId)
      return fail(11200, 'AppIdNoAuthError: app_id does not match the api key');
    if (frame.parameter?.chat?.domain !== DOMAINS[path]) {
      return fail(10404, `domain ${String(frame.parameter?.chat?.domain)} is not served at ${path}`);
    }
    const messages = frame.payload?.message?.text;
    if (!Array.isArray(messages) || messages.length === 0) return fail(10163, 'payload.message.text is required');
    for (const message of messages) {
      if (!['system', 'user', 'assistant'].includes(message?.role) || typeof message?.content !== 'string') {
        return fail(10163, `invalid message ${JSON.stringify(message)}`);
      }
      if (message.content.includes('FORBIDDEN')) {
        return fail(10013, 'input content audit failed: the input may contain prohibited content');
      }
    }
    const usage = state.behaviour.usage ?? { prompt_tokens: 9, completion_tokens: 6 };
    const fn = frame.payload?.functions?.text?.[0];
    const items = fn
      ? [
          {
            content: '',
            role: 'assistant',
            content_type: 'text',
            index: 0,
            function_call: {
              name: fn.name,
              arguments: JSON.stringify(state.behaviour.functionArgs ?? { city: 'Paris' }),
            },
          },
        ]
      : (() => {
          const reply = state.behaviour.reply ?? 'Hello from the Spark mock.';
          return [reply.slice(0, 4), reply.slice(4, 11), reply.slice(11)].map((content) => ({
            content,
            role: 'assistant',
            index: 0,
          }));
        })();
    items.forEach((item, seq) => {
      const last = seq === items.length - 1;
      const status = last ? 2 : seq === 0 ? 0 : 1;
      ws.send(
        JSON.stringify({
          header: { code: 0, message: 'Success', sid, status },
          payload: {
            choices: { status, seq, text: [item] },
            ...(last
              ? {
                  usage: {
                    text: { question_tokens: 4, ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
                  },
                }
              : {}),
          },
        }),
      );
    });
    ws.close();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    frames,
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(value: MockXunfeiBehaviour) {
      state.behaviour = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

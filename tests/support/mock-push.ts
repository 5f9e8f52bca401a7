import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A push a mock service accepted. */
export interface Push {
  title: string;
  body: string;
  priority?: number;
}

export interface MockPushServer {
  url: string;
  /** Accepted pushes, oldest first; refused calls are not recorded. */
  pushes: Push[];
  /** Calls refused for a wrong device key or token. */
  refused: number;
  close(): Promise<void>;
}

async function listen(handle: (request: IncomingMessage, body: string, response: ServerResponse) => void) {
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => handle(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * Bark as its server checks: GET /<device key>/<title>/<body> (or /<device key>/<body>); a key that was
 * never registered is refused with 400, as Bark refuses a key it has no device token for.
 */
export async function startMockBark(deviceKey: string): Promise<MockPushServer> {
  const mock: MockPushServer = { url: '', pushes: [], refused: 0, close: async () => {} };
  const { url, close } = await listen((request, _body, response) => {
    const parts = new URL(request.url ?? '/', 'http://bark').pathname
      .split('/')
      .filter(Boolean)
      .map(decodeURIComponent);
    if (request.method !== 'GET' || parts.length < 2 || parts.length > 3) {
      json(response, 404, { code: 404, message: 'not found' });
      return;
    }
    if (parts[0] !== deviceKey) {
      mock.refused++;
      json(response, 400, { code: 400, message: 'failed to get device token: device not registered' });
      return;
    }
    mock.pushes.push(parts.length === 3 ? { title: parts[1]!, body: parts[2]! } : { title: '', body: parts[1]! });
    json(response, 200, { code: 200, message: 'success', timestamp: Math.floor(Date.now() / 1000) });
  });
  mock.url = url;
  mock.close = close;
  return mock;
}

/**
 * Gotify as its server checks: POST /message with an application token in X-Gotify-Key, the `token`
 * query or a bearer header (401 otherwise), and a JSON body whose `message` is required (400 otherwise).
 */
export async function startMockGotify(appToken: string): Promise<MockPushServer> {
  const mock: MockPushServer = { url: '', pushes: [], refused: 0, close: async () => {} };
  let id = 0;
  const { url, close } = await listen((request, body, response) => {
    const address = new URL(request.url ?? '/', 'http://gotify');
    if (request.method !== 'POST' || address.pathname !== '/message') {
      json(response, 404, { error: 'Not Found', errorCode: 404, errorDescription: 'page not found' });
      return;
    }
    const bearer = request.headers.authorization?.replace(/^Bearer /, '');
    const token = request.headers['x-gotify-key'] ?? address.searchParams.get('token') ?? bearer;
    if (token !== appToken) {
      mock.refused++;
      json(response, 401, {
        error: 'Unauthorized',
        errorCode: 401,
        errorDescription: 'you need to provide a valid access token or user credentials to access this api',
      });
      return;
    }
    let message: { title?: unknown; message?: unknown; priority?: unknown };
    try {
      message = JSON.parse(body);
    } catch {
      message = {};
    }
    if (typeof message.message !== 'string' || message.message === '') {
      json(response, 400, { error: 'Bad Request', errorCode: 400, errorDescription: "Field 'message' is required" });
      return;
    }
    const push: Push = { title: String(message.title ?? ''), body: message.message };
    if (typeof message.priority === 'number') push.priority = message.priority;
    mock.pushes.push(push);
    json(response, 200, { id: ++id, appid: 1, ...push, message: push.body, date: new Date().toISOString() });
  });
  mock.url = url;
  mock.close = close;
  return mock;
}

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';

/**
 * A local OpenAI Realtime endpoint, for OpenAI (`GET /v1/realtime?model=`, bearer key or the browser
 * subprotocol key) and Azure, in its two forms: the preview one by deployment
 * (`GET /openai/realtime?api-version=<dated>&deployment=`) and the GA v1 one
 * (`GET /openai/v1/realtime?model=<deployment>`, which refuses a dated api-version), both with the
 * `api-key` header. Like the real service it refuses a handshake with a wrong key (401), no model
 * (400) or an unknown path (404) in HTTP, with OpenAI's error JSON, and then speaks the protocol: `session.created` on connect; `session.update` →
 * `session.updated`; `conversation.item.create` → the item's created events; `input_audio_buffer`
 * append/commit; `response.create` → `response.created`, the output item and part events, text or
 * audio (with transcript) deltas and their done events, and `response.done` with the usage (the next
 * of `usages`, else counted from what was asked); an unknown event → an `error` event. The beta
 * protocol's event names (`response.text.delta`, `response.audio.delta`, …) are used when the
 * handshake carried `OpenAI-Beta: realtime=v1`, the GA names otherwise. With `hold` set, a response
 * stops after its first delta and stays active (a second `response.create` is refused, as the real
 * service refuses one while a response is active) until `response.cancel`, which ends it with a
 * `response.done` of status `cancelled` and its usage; a cancel with nothing active is an `error`
 * `response_cancel_not_active`. An out-of-band response (`conversation: "none"`) runs beside the
 * active one and is never held. Binary frames are recorded (the real service has no use for them);
 * `push` sends any frame to the open sessions.
 */
export interface RealtimeUsage {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  input_token_details: {
    text_tokens: number;
    audio_tokens: number;
    cached_tokens: number;
    cached_tokens_details?: { text_tokens: number; audio_tokens: number };
  };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

export interface RealtimeConnection {
  /** The request target as dialled: path and query string. */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The client events received, parsed. */
  events: any[];
  /** Binary frames received. */
  binary: Buffer[];
  closed?: { code: number; reason: string };
}

export interface MockRealtime {
  /** http://127.0.0.1:port: the channel's base URL (dialled as ws://). */
  url: string;
  /** Usages of the next responses, used in order. */
  usages: RealtimeUsage[];
  /** Responses stop after their first delta and wait for `response.cancel`. */
  hold: boolean;
  connections: RealtimeConnection[];
  /** Sends a frame to every open session. */
  push(data: string | Buffer, binary: boolean): void;
  close(): Promise<void>;
}

/** A usage object as the service reports it, from its parts. */
export function realtimeUsage(parts: {
  textIn: number;
  audioIn: number;
  cachedText?: number;
  cachedAudio?: number;
  textOut: number;
  audioOut: number;
}): RealtimeUsage {
  const cachedText = parts.cachedText ?? 0;
  const cachedAudio = parts.cachedAudio ?? 0;
  const input = parts.textIn + parts.audioIn;
  const output = parts.textOut + parts.audioOut;
  return {
    total_tokens: input + output,
    input_tokens: input,
    output_tokens: output,
    input_token_details: {
      text_tokens: parts.textIn,
      audio_tokens: parts.audioIn,
      cached_tokens: cachedText + cachedAudio,
      cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio },
    },
    output_token_details: { text_tokens: parts.textOut, audio_tokens: parts.audioOut },
  };
}

const id = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

/** `keys`: the bearer keys (OpenAI) and api-keys (Azure) the service accepts. */
export async function startMockRealtime(keys: string[]): Promise<MockRealtime> {
  const accepted = new Set(keys);
  const usages: RealtimeUsage[] = [];
  const connections: RealtimeConnection[] = [];
  const open = new Set<WebSocket>();
  const hold = { on: false };
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false),
  });
  const refuse = (socket: Socket, status: number, code: string, message: string) => {
    const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code, param: null } });
    const reason = status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'WebSocket upgrade required', type: 'invalid_request_error' } }));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const query = Object.fromEntries(url.searchParams);
    let key: string | undefined;
    let model: string | undefined;
    if (url.pathname === '/v1/realtime') {
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      const subprotocol = String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim())
        .find((p) => p.startsWith('openai-insecure-api-key.'))
        ?.slice('openai-insecure-api-key.'.length);
      key = bearer ?? subprotocol;
      model = query.model;
    } else if (url.pathname === '/openai/realtime') {
      key = typeof req.headers['api-key'] === 'string' ? req.headers['api-key'] : undefined;
      model = query.deployment;
      if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(query['api-version'] ?? '')) {
        return refuse(socket, 400, 'missing_api_version', 'a dated api-version is required');
      }
    } else if (url.pathname === '/openai/v1/realtime') {
      key = typeof req.headers['api-key'] === 'string' ? req.headers['api-key'] : undefined;
      model = query.model;
      if (/^\d/.test(query['api-version'] ?? '')) {
        return refuse(socket, 400, 'invalid_api_version', 'the api-version query parameter is not allowed on /v1');
      }
    } else {
      return refuse(socket, 404, 'not_found', `no route ${url.pathname}`);
    }
    if (!key || !accepted.has(key)) {
      return refuse(socket, 401, 'invalid_api_key', `Incorrect API key provided: ${key ?? '(none)'}`);
    }
    if (!model) return refuse(socket, 400, 'missing_model', 'You must provide a model parameter');
    const beta = /realtime=v1/.test(String(req.headers['openai-beta'] ?? ''));
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection: RealtimeConnection = {
        url: req.url ?? '',
        path: url.pathname,
        query,
        headers: req.headers,
        events: [],
        binary: [],
      };
      connections.push(connection);
      open.add(ws);
      ws.on('close', (code, reason) => {
        open.delete(ws);
        connection.closed = { code, reason: reason.toString() };
      });
      serve(ws, connection, model, beta);
    });
  });

  function serve(ws: WebSocket, connection: RealtimeConnection, model: string, beta: boolean) {
    const send = (event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: id('event'), ...event }));
    const session: Record<string, any> = beta
      ? {
          id: id('sess'),
          object: 'realtime.session',
          model,
          modalities: ['text', 'audio'],
          instructions: '',
          voice: 'alloy',
          input_audio_format: 'pcm16',
          output_audio_format: 'pcm16',
          turn_detection: null,
          tools: [],
        }
      : {
          type: 'realtime',
          id: id('sess'),
          object: 'realtime.session',
          model,
          output_modalities: ['audio'],
          instructions: '',
          audio: { input: { format: { type: 'audio/pcm', rate: 24000 } }, output: { voice: 'alloy' } },
          tools: [],
        };
    const items: any[] = [];
    let audioBytes = 0;
    /** Ends the held response, if one is active. */
    let active: ((status: 'cancelled') => void) | undefined;
    send({ type: 'session.created', session });

    const error = (code: string, message: string, eventId?: string) =>
      send({
        type: 'error',
        error: { type: 'invalid_request_error', code, message, param: null, event_id: eventId ?? null },
      });

    const itemCreated = (item: any, previous: string | null) => {
      if (beta) send({ type: 'conversation.item.created', previous_item_id: previous, item });
      else {
        send({ type: 'conversation.item.added', previous_item_id: previous, item });
        send({ type: 'conversation.item.done', previous_item_id: previous, item });
      }
    };

    const respond = (request: any) => {
      const outOfBand = request?.conversation === 'none';
      if (active && !outOfBand) {
        return error('conversation_already_has_active_response', 'Conversation already has an active response');
      }
      const responseId = id('resp');
      const modalities: string[] =
        request?.output_modalities ??
        request?.modalities ??
        session.output_modalities ??
        session.modalities ??
        (beta ? ['text', 'audio'] : ['audio']);
      const audio = modalities.includes('audio');
      const response = {
        object: 'realtime.response',
        id: responseId,
        status: 'in_progress',
        status_details: null,
        output: [] as any[],
        usage: null,
      };
      send({ type: 'response.created', response });
      const itemId = id('item');
      const item = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress' };
      send({
        type: 'response.output_item.added',
        response_id: responseId,
        output_index: 0,
        item: { ...item, content: [] },
      });
      if (beta) send({ type: 'conversation.item.created', previous_item_id: items.at(-1)?.id ?? null, item });
      const text = 'Hello from the realtime mock.';
      const where = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
      const finish = (status: 'completed' | 'cancelled', part: Record<string, unknown>) => {
        const done = { ...item, status: status === 'completed' ? 'completed' : 'incomplete', content: [part] };
        // An out-of-band response stays out of the conversation.
        if (!outOfBand) items.push(done);
        send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item: done });
        const inputText = items.reduce((n, i) => n + JSON.stringify(i.content ?? '').length, 0);
        const usage =
          usages.shift() ??
          realtimeUsage({
            textIn: Math.ceil(inputText / 4),
            audioIn: Math.ceil(audioBytes / 800),
            textOut: 7,
            audioOut: audio ? 20 : 0,
          });
        const details = status === 'cancelled' ? { type: 'cancelled', reason: 'client_cancelled' } : null;
        send({
          type: 'response.done',
          response: { ...response, status, status_details: details, output: [done], usage },
        });
      };
      if (hold.on && !outOfBand) {
        send({
          type: 'response.content_part.added',
          ...where,
          part: { type: beta ? 'text' : 'output_text', text: '' },
        });
        send({ type: beta ? 'response.text.delta' : 'response.output_text.delta', ...where, delta: 'Hello' });
        active = (status) => {
          active = undefined;
          finish(status, { type: beta ? 'text' : 'output_text', text: 'Hello' });
        };
        return;
      }
      let part: Record<string, unknown>;
      if (audio) {
        part = { type: beta ? 'audio' : 'output_audio', transcript: text };
        send({ type: 'response.content_part.added', ...where, part: { ...part, transcript: '' } });
        const pcm = Buffer.alloc(4800, 1).toString('base64');
        send({ type: beta ? 'response.audio.delta' : 'response.output_audio.delta', ...where, delta: pcm });
        send({ type: beta ? 'response.audio.delta' : 'response.output_audio.delta', ...where, delta: pcm });
        send({ type: beta ? 'response.audio.done' : 'response.output_audio.done', ...where });
        for (const word of text.split(/(?<= )/)) {
          send({
            type: beta ? 'response.audio_transcript.delta' : 'response.output_audio_transcript.delta',
            ...where,
            delta: word,
          });
        }
        send({
          type: beta ? 'response.audio_transcript.done' : 'response.output_audio_transcript.done',
          ...where,
          transcript: text,
        });
      } else {
        part = { type: beta ? 'text' : 'output_text', text };
        send({ type: 'response.content_part.added', ...where, part: { ...part, text: '' } });
        for (const word of text.split(/(?<= )/)) {
          send({ type: beta ? 'response.text.delta' : 'response.output_text.delta', ...where, delta: word });
        }
        send({ type: beta ? 'response.text.done' : 'response.output_text.done', ...where, text });
      }
      send({ type: 'response.content_part.done', ...where, part });
      finish('completed', part);
    };

    ws.on('message', (raw: RawData, isBinary: boolean) => {
      const data = Buffer.isBuffer(raw) ? raw : Buffer.concat(raw as Buffer[]);
      if (isBinary) {
        connection.binary.push(data);
        return;
      }
      let event: any;
      try {
        event = JSON.parse(data.toString('utf8'));
      } catch {
        return error('invalid_json', 'The event is not valid JSON');
      }
      connection.events.push(event);
      switch (event?.type) {
        case 'session.update':
          Object.assign(session, event.session ?? {});
          return send({ type: 'session.updated', session });
        case 'conversation.item.create': {
          const item = {
            id: event.item?.id ?? id('item'),
            object: 'realtime.item',
            status: 'completed',
            ...event.item,
          };
          if (item.type !== 'message' && item.type !== 'function_call_output' && item.type !== 'function_call') {
            return error('invalid_value', `Invalid item type ${String(item.type)}`, event.event_id);
          }
          const previous = items.at(-1)?.id ?? null;
          items.push(item);
          return itemCreated(item, previous);
        }
        case 'input_audio_buffer.append':
          if (typeof event.audio !== 'string') return error('missing_required_parameter', 'audio is required');
          audioBytes += Buffer.from(event.audio, 'base64').length;
          return;
        case 'input_audio_buffer.commit': {
          const itemId = id('item');
          send({ type: 'input_audio_buffer.committed', previous_item_id: items.at(-1)?.id ?? null, item_id: itemId });
          const item = {
            id: itemId,
            object: 'realtime.item',
            type: 'message',
            role: 'user',
            content: [{ type: 'input_audio' }],
          };
          const previous = items.at(-1)?.id ?? null;
          items.push(item);
          return itemCreated(item, previous);
        }
        case 'response.create':
          return respond(event.response);
        case 'response.cancel':
          if (!active) return error('response_cancel_not_active', 'Cancellation failed: no active response found');
          return active('cancelled');
        default:
          return error('invalid_value', `Invalid value: '${String(event?.type)}'`, event?.event_id);
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    usages,
    get hold() {
      return hold.on;
    },
    set hold(on: boolean) {
      hold.on = on;
    },
    connections,
    push(data, binary) {
      for (const ws of open) ws.send(data, { binary });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of open) ws.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Transport } from '../../transport.ts';
import { sparkSession } from './session.ts';

let server: WebSocketServer | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

/** A WebSocket server that does `behave` with each connection; answers the session's ws:// URL. */
async function serve(behave: (socket: WebSocket) => void): Promise<string> {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  server.on('connection', behave);
  await new Promise((resolve) => server!.once('listening', resolve));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v3.5/chat`;
}

const transport = { timeouts: { headersTimeoutMs: 300, bodyTimeoutMs: 300 } } as unknown as Transport;
const frame = (status: number, content: string) =>
  JSON.stringify({
    header: { code: 0, sid: 's', status },
    payload: { choices: { status, seq: status, text: [{ role: 'assistant', content }] } },
  });

const open = (url: string, stream: boolean) =>
  sparkSession(
    { url, method: 'GET', headers: {}, body: '{}' },
    { transport, signal: new AbortController().signal, stream },
  );

describe('a Spark session', () => {
  it('streams frames as SSE events as they come', async () => {
    const url = await serve((socket) =>
      socket.once('message', () => {
        socket.send(frame(0, 'He'));
        socket.send(frame(2, 'llo'));
      }),
    );
    const response = await open(url, true);
    expect([response.status, response.headers['content-type']]).toEqual([200, 'text/event-stream']);
    const text = await response.body.text();
    expect(text.split('\n\n').filter(Boolean)).toEqual([`data: ${frame(0, 'He')}`, `data: ${frame(2, 'llo')}`]);
  });

  it('ends a stream with an error when the socket closes mid-answer', async () => {
    const url = await serve((socket) =>
      socket.once('message', () => {
        socket.send(frame(0, 'He'));
        socket.close();
      }),
    );
    const response = await open(url, true);
    await expect(response.body.text()).rejects.toThrow(/closed the connection before the answer was complete/);
  });

  it('gives up on a silent endpoint after the transport wait, as a timeout', async () => {
    const url = await serve(() => {});
    const error = await open(url, false).catch((e: unknown) => e as Error);
    expect(error).toMatchObject({ name: 'TimeoutError', message: 'the Spark endpoint sent nothing for 0.3s' });
  });
});

import { once } from 'node:events';
import { type IncomingMessage, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import { sleep, waitFor } from '../support/wait.ts';

// StreamCacheQueueLength: a client that stops reading a stream makes the gateway stop reading the
// upstream (0: at once; N: after N more chunks), so a slow client costs the gateway no more memory
// than that queue; when the client reads again, the rest follows and the stream arrives whole.

/** Far more than every socket buffer on the way (upstream → gateway → client) can hold. */
const CHUNKS = 640;
const PAD = 'x'.repeat(48 * 1024);
const frame = (i: number) =>
  `data: {"id":"c${i}","object":"chat.completion.chunk","model":"bp","choices":[{"index":0,"delta":{"content":"${PAD}"}}]}\n\n`;
const USAGE =
  'data: {"id":"cu","object":"chat.completion.chunk","model":"bp","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}\n\n';
const DONE = 'data: [DONE]\n\n';

/** What the upstream has written of its stream so far, and whether it waits for the gateway to read. */
interface Progress {
  sent: number;
  blocked: boolean;
  finished: boolean;
}

let gateway: Gateway;
let drop: () => Promise<void>;
let upstream: MockServer;
let progress: Progress;
let key: string;

beforeAll(async () => {
  upstream = await serveMock(async (_req, res) => {
    const mine: Progress = { sent: 0, blocked: false, finished: false };
    progress = mine;
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < CHUNKS && !closed; i++) {
      if (!res.write(frame(i))) {
        mine.blocked = true;
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
        mine.blocked = false;
      }
      mine.sent++;
    }
    res.end(USAGE + DONE);
    mine.finished = true;
  });
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const root = await setupRoot(gateway.url);
  const created = await root.post('/api/channel/', {
    name: 'slow-client',
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: 'bp',
    group: 'default',
  });
  expect(created.body.success).toBe(true);
  await gateway.options.setMany({ ModelRatio: JSON.stringify({ bp: 1 }) });
  key = (await root.post('/api/token/', { name: 'bp', unlimited_quota: true })).body.data.key;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

/** A streamed chat request whose answer is left unread (paused) until `read()`. */
async function pausedStream(): Promise<{ read: () => Promise<Buffer> }> {
  const req = request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
  req.end(JSON.stringify({ model: 'bp', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  expect(res.statusCode).toBe(200);
  res.pause();
  return {
    read: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
  };
}

/** Waits until the upstream has written nothing more for a while (it is blocked, or done). */
async function upstreamSettled(): Promise<void> {
  let last = -1;
  let still = 0;
  while (still < 10) {
    await sleep(50);
    still = progress.sent === last ? still + 1 : 0;
    last = progress.sent;
  }
}

const whole = () => Buffer.from(Array.from({ length: CHUNKS }, (_, i) => frame(i)).join('') + USAGE + DONE);

describe('a client that does not read a stream', () => {
  it('StreamCacheQueueLength 0: the gateway stops reading the upstream, and goes on when the client reads', async () => {
    await gateway.options.setMany({ StreamCacheQueueLength: '0' });
    const stream = await pausedStream();
    await upstreamSettled();
    // The upstream waits for the gateway, having written only what the socket buffers on the way hold.
    expect(progress.finished).toBe(false);
    expect(progress.blocked).toBe(true);
    expect(progress.sent).toBeLessThan(CHUNKS);
    const body = await stream.read();
    expect(progress.finished).toBe(true);
    expect(body.equals(whole())).toBe(true);
  });

  it('a queue as long as the stream: the gateway reads the whole upstream while the client waits', async () => {
    await gateway.options.setMany({ StreamCacheQueueLength: String(CHUNKS + 10) });
    const stream = await pausedStream();
    await waitFor(() => progress.finished, 30_000);
    expect(progress.sent).toBe(CHUNKS);
    const body = await stream.read();
    expect(body.equals(whole())).toBe(true);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from './transport.ts';
import { bodyText } from './whole-answer.ts';

/** An upstream with one behaviour per path. */
let server: Server;
let base: string;
const transport = new Transport({ headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, connectionsPerOrigin: 4 });

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/chunks') {
      // Three writes, so the body arrives (at least possibly) in several chunks.
      res.writeHead(201, { 'content-type': 'application/json', 'x-echo': req.headers['x-ask'] ?? '' });
      res.write('{"a":');
      setTimeout(() => res.write('"é"'), 5);
      setTimeout(() => res.end(',"b":2}'), 10);
      return;
    }
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.destroy(), 5);
      return;
    }
    if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 2_000);
      return;
    }
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => res.end(`${req.method} ${req.url} ${body}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('Transport.sendWhole', () => {
  it('reads a body that comes in several writes, with the status and headers', async () => {
    const answer = await transport.sendWhole({ url: `${base}/chunks`, method: 'GET', headers: { 'x-ask': 'hi' } });
    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['x-echo']).toBe('hi');
    expect(JSON.parse((await answer.bytes()).toString('utf8'))).toEqual({ a: 'é', b: 2 });
  });

  it('sends the method, the path with its query and the body', async () => {
    const answer = await transport.sendWhole({
      url: `${base}/echo?x=1`,
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'payload',
    });
    expect((await answer.bytes()).toString()).toBe('POST /echo?x=1 payload');
  });

  it('rejects the body, not the send, when the upstream breaks off after its headers', async () => {
    const answer = await transport.sendWhole({ url: `${base}/cut`, method: 'GET', headers: {} });
    expect(answer.status).toBe(200);
    await expect(answer.bytes()).rejects.toThrow();
  });

  it('rejects the send when the upstream cannot be reached, or the URL is not http', async () => {
    await expect(transport.sendWhole({ url: 'http://127.0.0.1:1/', method: 'GET', headers: {} })).rejects.toThrow();
    await expect(transport.sendWhole({ url: 'ftp://127.0.0.1/', method: 'GET', headers: {} })).rejects.toThrow(
      'Invalid URL protocol',
    );
  });

  it('is aborted by its signal, before or while waiting, with the signal reason', async () => {
    const before = new AbortController();
    before.abort(new Error('stop now'));
    await expect(
      transport.sendWhole({ url: `${base}/slow`, method: 'GET', headers: {} }, before.signal),
    ).rejects.toThrow('stop now');
    const during = new AbortController();
    const sent = transport.sendWhole({ url: `${base}/slow`, method: 'GET', headers: {} }, during.signal);
    setTimeout(() => during.abort(new Error('stopped while waiting')), 20);
    await expect(sent).rejects.toThrow('stopped while waiting');
  });
});

describe('bodyText', () => {
  it('decodes UTF-8 and drops a leading byte order mark, as undici text() does', () => {
    expect(bodyText(Buffer.from('\ufeff{"x":"ü"}'))).toBe('{"x":"ü"}');
    expect(bodyText(Buffer.from('ab'))).toBe('ab');
    expect(bodyText(Buffer.alloc(0))).toBe('');
  });
});

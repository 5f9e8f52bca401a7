import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundGuard } from './guard.ts';
import type { FetchSettings, Lookup } from './policy.ts';

/**
 * The guard against real sockets, all on 127.0.0.1: names come from a stub resolver that counts its
 * calls, so a test can tell the connection went to the checked address and not to a second answer.
 */
const base: FetchSettings = {
  enabled: true,
  allowPrivateIp: false,
  domainAllowList: false,
  domains: [],
  ipAllowList: false,
  ips: [],
  ports: ['80', '443', '8080', '8443'],
  ipFilterForDomains: true,
};
/** What the local servers need: loopback and their random ports. */
const local: Partial<FetchSettings> = { allowPrivateIp: true, ports: [] };

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let server: Server;
let origin = '';
let port = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ method: request.method!, path: request.url!, headers: request.headers, body });
      const url = new URL(request.url!, 'http://local');
      const to = url.searchParams.get('to');
      if (to) {
        response.writeHead(Number(url.searchParams.get('status') ?? 302), { location: to });
        response.end();
        return;
      }
      if (url.pathname === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        // Larger than any socket buffer: the body must still arrive whole after the agent is closed.
        response.end(Buffer.alloc(4 * 1024 * 1024, 7));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(`hello ${request.method}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function guardWith(settings: Partial<FetchSettings>, zone: Record<string, string[]> = {}) {
  const lookups: string[] = [];
  const lookup: Lookup = async (host) => {
    lookups.push(host);
    const addresses = zone[host];
    if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { guard: new OutboundGuard({ settings: () => ({ ...base, ...settings }), lookup }), lookups };
}

const signal = () => AbortSignal.timeout(5000);

describe('OutboundGuard', () => {
  it('refuses 127.0.0.1 by default and sends nothing', async () => {
    seen.length = 0;
    const { guard } = guardWith({});
    await expect(
      guard.send({ url: `${origin}/hook`, method: 'POST', body: '{}', signal: signal() }),
    ).rejects.toMatchObject({ code: 'OUTBOUND_URL_REFUSED', reason: 'port' });
    await expect(guard.send({ url: `${origin}/hook`, signal: signal() })).rejects.toMatchObject({ reason: 'port' });
    const { guard: anyPort } = guardWith({ ports: [] });
    await expect(anyPort.send({ url: `${origin}/hook`, signal: signal() })).rejects.toMatchObject({
      reason: 'private_ip',
    });
    expect(seen).toHaveLength(0);
  });

  it('delivers to a local server when private addresses are allowed, or the address is allow-listed', async () => {
    seen.length = 0;
    const { guard } = guardWith(local);
    const answer = await guard.send({
      url: `${origin}/hook`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer s' },
      body: '{"a":1}',
      signal: signal(),
    });
    expect(answer.status).toBe(200);
    expect(await answer.body.text()).toBe('hello POST');
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/hook', body: '{"a":1}' });
    expect(seen[0]!.headers.authorization).toBe('Bearer s');

    const { guard: listed } = guardWith({ ipAllowList: true, ips: ['127.0.0.1/32'], ports: [String(port)] });
    expect((await listed.send({ url: `${origin}/listed`, signal: signal() })).status).toBe(200);
  });

  it('connects to the address it checked, never asking DNS again', async () => {
    seen.length = 0;
    // hooks.rebind.test does not exist for the machine's resolver: only the checked answer can reach the server.
    const { guard, lookups } = guardWith(local, { 'hooks.rebind.test': ['127.0.0.1'] });
    const answer = await guard.send({ url: `http://hooks.rebind.test:${port}/pinned`, signal: signal() });
    expect(answer.status).toBe(200);
    await answer.body.dump();
    expect(lookups).toEqual(['hooks.rebind.test']);
    expect(seen[0]).toMatchObject({ path: '/pinned' });
    expect(seen[0]!.headers.host).toBe(`hooks.rebind.test:${port}`);
  });

  it('streams a large body whole after its one-request agent was closed', async () => {
    const { guard } = guardWith(local);
    const answer = await guard.send({ url: `${origin}/big`, signal: signal() });
    expect((await answer.body.arrayBuffer()).byteLength).toBe(4 * 1024 * 1024);
  });

  it('hands a redirect back by default', async () => {
    const { guard } = guardWith(local);
    const answer = await guard.send({ url: `${origin}/r?to=/final`, method: 'POST', body: 'x', signal: signal() });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('/final');
    await answer.body.dump();
  });

  it('follows redirects it may, checking every hop like a new URL', async () => {
    seen.length = 0;
    const { guard } = guardWith(local, { 'elsewhere.test': ['10.9.8.7'], 'img.test': ['127.0.0.1'] });
    const followed = await guard.send({ url: `${origin}/r?to=/final`, signal: signal(), maxRedirects: 3 });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${origin}/final`);
    await followed.body.dump();

    // Off to another name: its addresses are checked (and the credentials stay behind).
    const hop = encodeURIComponent(`http://img.test:${port}/moved`);
    const moved = await guard.send({
      url: `${origin}/r?to=${hop}`,
      headers: { authorization: 'Bearer s' },
      signal: signal(),
      maxRedirects: 1,
    });
    expect(moved.status).toBe(200);
    await moved.body.dump();
    expect(seen.at(-1)).toMatchObject({ path: '/moved' });
    expect(seen.at(-1)!.headers.authorization).toBeUndefined();

    // Too many hops: the last redirect is the answer.
    const chain = encodeURIComponent(`/r?to=${encodeURIComponent('/final')}`);
    const stopped = await guard.send({ url: `${origin}/r?to=${chain}`, signal: signal(), maxRedirects: 1 });
    expect(stopped.status).toBe(302);
    await stopped.body.dump();
  });

  it('refuses a redirect into a refused place before connecting there', async () => {
    const { guard } = guardWith(
      { ipAllowList: true, ips: ['127.0.0.1'], ports: [] },
      { 'elsewhere.test': ['10.9.8.7'] },
    );
    for (const to of ['http://elsewhere.test/', 'http://127.0.0.2/', 'file:///etc/passwd']) {
      await expect(
        guard.send({ url: `${origin}/r?to=${encodeURIComponent(to)}`, signal: signal(), maxRedirects: 3 }),
      ).rejects.toMatchObject({ code: 'OUTBOUND_URL_REFUSED' });
    }
  });

  it('turns a POST into a GET on 303, and keeps it on 307', async () => {
    seen.length = 0;
    const { guard } = guardWith(local);
    const after303 = await guard.send({
      url: `${origin}/r?status=303&to=/see-other`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: signal(),
      maxRedirects: 1,
    });
    expect(await after303.body.text()).toBe('hello GET');
    const after307 = await guard.send({
      url: `${origin}/r?status=307&to=/temporary`,
      method: 'POST',
      body: 'again',
      signal: signal(),
      maxRedirects: 1,
    });
    expect(await after307.body.text()).toBe('hello POST');
    expect(seen.at(-1)).toMatchObject({ path: '/temporary', body: 'again' });
  });

  it('checks nothing when enable_ssrf_protection is off', async () => {
    const { guard, lookups } = guardWith({ enabled: false });
    const answer = await guard.send({ url: `${origin}/open`, signal: signal() });
    expect(answer.status).toBe(200);
    await answer.body.dump();
    expect(lookups).toEqual([]);
  });
});

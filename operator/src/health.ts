import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthServer {
  /** e.g. http://127.0.0.1:8081 */
  url: string;
  close(): Promise<void>;
}

export interface HealthOptions {
  host: string;
  port: number;
  registry: Registry;
  /** Liveness: false once the process is stopping or broken beyond repair. */
  healthy: () => boolean;
  /** For /healthz's body only. */
  details: () => Record<string, unknown>;
}

/** GET /healthz (liveness, with a small JSON summary) and GET /metrics (Prometheus text). */
export async function startHealthServer(options: HealthOptions): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      const healthy = options.healthy();
      response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: healthy ? 'ok' : 'unhealthy', ...options.details() }));
      return;
    }
    if (path === '/metrics') {
      options.registry
        .metrics()
        .then((text) => {
          response.writeHead(200, { 'content-type': options.registry.contentType });
          response.end(text);
        })
        .catch((error: unknown) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(String(error));
        });
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

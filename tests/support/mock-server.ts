import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The plumbing every mock upstream shares: a loopback HTTP server that reads each request's whole
 * body and hands it to `onRequest`; a rejection answers 500 (or ends a started answer).
 */
export async function serveMock(
  onRequest: (req: IncomingMessage, res: ServerResponse, raw: Buffer) => Promise<void>,
): Promise<MockServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onRequest(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        if (res.headersSent) return res.end();
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

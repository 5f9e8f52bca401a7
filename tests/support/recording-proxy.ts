import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';

/** One request a client sent through the proxy, and the status it got. */
export interface ProxiedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as the client meant it: decompressed, and parsed when it is JSON. */
  body: any;
  /** The status the target answered; 0 for a WebSocket upgrade, which is refused. */
  status: number;
}

export interface RecordingProxy {
  url: string;
  calls: ProxiedCall[];
  close(): Promise<void>;
}

const DECODE: Record<string, (raw: Buffer) => Buffer> = {
  gzip: gunzipSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
};

/**
 * A pass-through HTTP proxy in front of the gateway that records what a client really sends (path,
 * headers, body) and the status it got back, answers streamed as they come. It shows which
 * endpoints a CLI calls and lets a test compare a client's body with what reached the upstream.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const calls: ProxiedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const call: ProxiedCall = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: readable(raw, req.headers),
        status: 0,
      };
      calls.push(call);
      const upstream = forward(`${target}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (answer) => {
        call.status = answer.statusCode ?? 0;
        res.writeHead(call.status, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(raw);
    });
  });
  // No WebSocket through the gateway: an upgrade is recorded and refused, as a plain HTTP server would.
  server.on('upgrade', (req, socket) => {
    calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: undefined, status: 0 });
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readable(raw: Buffer, headers: IncomingHttpHeaders): any {
  if (raw.length === 0) return undefined;
  const encoding = String(headers['content-encoding'] ?? '').trim();
  const decode = DECODE[encoding];
  const bytes = decode ? decode(raw) : raw;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8');
  }
}

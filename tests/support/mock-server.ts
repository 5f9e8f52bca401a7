import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockServer {
  url: string;
  /** What reached the mock: counted as it happens. */
  readonly traffic: MockTraffic;
  /** Plays the fault `fault()` names (if any) on each answer from now on. */
  playFaults(fault: () => MockFault | undefined): void;
  close(): Promise<void>;
}

export interface MockTraffic {
  /** Requests received (their whole body read). */
  received: number;
  /** Requests whose client closed the connection before the answer ended (the gateway aborted them). */
  aborted: number;
}

/** A network fault the mock plays on its answers (a mock's `behaviour.fault`). */
export interface MockFault {
  /** Waits this long before answering at all: the headers come late. */
  headersDelayMs?: number;
  /** Resets the connection after this many body writes of the answer (an upstream broken off mid-stream). */
  resetAfterWrites?: number;
  /** After this many body writes sends nothing more and never ends (a stalled upstream). */
  stallAfterWrites?: number;
}

/**
 * The plumbing every mock upstream shares: a loopback HTTP server that reads each request's whole
 * body and hands it to `onRequest`; a rejection answers 500 (or ends a started answer).
 */
export async function serveMock(
  onRequest: (req: IncomingMessage, res: ServerResponse, raw: Buffer) => Promise<void>,
): Promise<MockServer> {
  const traffic: MockTraffic = { received: 0, aborted: 0 };
  let fault: () => MockFault | undefined = () => undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const played = fault();
    /** The mock itself broke the answer: not a client's abort. */
    let faulted = false;
    res.on('close', () => {
      if (!res.writableFinished && !faulted) traffic.aborted++;
    });
    if (played) playFault(res, played, () => (faulted = true));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      traffic.received++;
      if (played?.headersDelayMs) await new Promise((resolve) => setTimeout(resolve, played.headersDelayMs));
      if (res.destroyed) return;
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
    traffic,
    playFaults(named) {
      fault = named;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Wraps the answer's writes (its end counts as one) so that, after the fault's count of them, the
 * answer stalls (nothing more is sent, it never ends) or resets: the write that crosses the count sends
 * half its bytes, and the connection is reset once they had time to arrive.
 */
function playFault(res: ServerResponse, fault: MockFault, onFault: () => void): void {
  const limit = fault.resetAfterWrites ?? fault.stallAfterWrites;
  if (limit === undefined) return;
  const write = res.write.bind(res) as (chunk: unknown) => boolean;
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  let writes = 0;
  let broken = false;
  /** Whether this write is past the fault: then it is (half) sent and the fault played. */
  const breaks = (chunk: unknown): boolean => {
    if (broken) return true;
    if (writes++ < limit) return false;
    broken = true;
    onFault();
    if (fault.resetAfterWrites === undefined) return true;
    const bytes = Buffer.from(typeof chunk === 'string' ? chunk : ((chunk as Uint8Array | undefined) ?? []));
    write(bytes.subarray(0, Math.floor(bytes.length / 2)));
    setTimeout(() => res.socket?.resetAndDestroy(), 50);
    return true;
  };
  res.write = ((chunk: unknown) => (breaks(chunk) ? true : write(chunk))) as ServerResponse['write'];
  res.end = ((chunk?: unknown) =>
    breaks(typeof chunk === 'function' ? undefined : chunk) ? res : end(chunk)) as ServerResponse['end'];
}

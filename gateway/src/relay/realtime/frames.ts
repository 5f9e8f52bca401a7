import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';

/** Bytes a direction may have queued on its way out before its source stops being read. */
const HIGH_WATER_BYTES = 1 << 20;
const LOW_WATER_BYTES = 1 << 18;

/**
 * Relays every frame from one socket to the other as it arrives, text as text and binary as binary,
 * without holding any back. When the receiving side cannot keep up, the sending side stops being
 * read (TCP pushes back on its peer) until the queue drains. `inspect` sees each frame after it was
 * handed on, and also a frame the receiver was gone for (a response finishing after the client left
 * is still billed). `rewrite`, when given, decides first what goes on: the frame, another in its
 * place, or nothing (then nothing is inspected either). It may decide later (a promise, which must
 * not reject): the frames after it then wait for it, so that the order of frames is kept.
 */
export function relayFrames(
  from: WebSocket,
  to: WebSocket,
  inspect?: (data: Buffer, isBinary: boolean) => void,
  rewrite?: (data: Buffer, isBinary: boolean) => Buffer | undefined | Promise<Buffer | undefined>,
): void {
  let queued = 0;
  const pass = (data: Buffer | undefined, isBinary: boolean): void => {
    if (data === undefined) return;
    if (to.readyState !== to.OPEN) {
      inspect?.(data, isBinary);
      return;
    }
    queued += data.length;
    if (queued > HIGH_WATER_BYTES && !from.isPaused) from.pause();
    to.send(data, { binary: isBinary }, () => {
      queued -= data.length;
      if (queued <= LOW_WATER_BYTES && from.isPaused && from.readyState === from.OPEN) from.resume();
    });
    inspect?.(data, isBinary);
  };
  const relay = (data: Buffer, isBinary: boolean): Promise<void> | undefined => {
    const decided = rewrite ? rewrite(data, isBinary) : data;
    if (!(decided instanceof Promise)) {
      pass(decided, isBinary);
      return undefined;
    }
    return decided.then((later) => pass(later, isBinary));
  };
  // The frames that came while a rewrite was deciding, chained behind it.
  let waiting: Promise<void> | undefined;
  from.on('message', (raw: RawData, isBinary: boolean) => {
    const data = toBuffer(raw);
    const pending = waiting ? waiting.then(() => relay(data, isBinary)) : relay(data, isBinary);
    if (!pending) return;
    waiting = pending;
    void pending.then(() => {
      if (waiting === pending) waiting = undefined;
    });
  });
}

/**
 * Watches that a peer is still there: it is pinged every half `silenceMs`, and one that sent nothing
 * (no frame, no pong) for `silenceMs` is reported dead, once. A session may be quiet for long (nobody
 * speaks), but a connection that died without a close (a NAT that forgot it, a peer that crashed)
 * would otherwise hold it open forever.
 */
export function watchLiveness(socket: WebSocket, silenceMs: number, dead: () => void): void {
  let heard = Date.now();
  const alive = () => {
    heard = Date.now();
  };
  socket.on('pong', alive);
  socket.on('message', alive);
  const timer = setInterval(() => {
    if (Date.now() - heard >= silenceMs) {
      clearInterval(timer);
      dead();
    } else if (socket.readyState === socket.OPEN) socket.ping();
  }, silenceMs / 2);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}

function toBuffer(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}

/** A Realtime `error` server event, in OpenAI's shape. */
export function errorEvent(type: string, code: string, message: string) {
  return {
    type: 'error',
    event_id: `event_${randomUUID().replaceAll('-', '').slice(0, 22)}`,
    error: { type, code, message, param: null, event_id: null },
  };
}

/** A close code one may send (1005, 1006 and 1015 are only ever reported), else 1000. */
export function sendableCloseCode(code: number): number {
  const reserved = code === 1004 || code === 1005 || code === 1006 || code === 1015;
  return (code >= 1000 && code <= 1014 && !reserved) || (code >= 3000 && code <= 4999) ? code : 1000;
}

/** A close reason within the 123 bytes a close frame carries. */
export function closeReason(reason: Buffer | string): string {
  const text = Buffer.isBuffer(reason) ? reason.toString('utf8') : reason;
  let cut = text;
  while (Buffer.byteLength(cut) > 123) cut = cut.slice(0, -1);
  return cut;
}

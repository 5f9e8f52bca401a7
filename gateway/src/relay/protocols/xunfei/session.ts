import { PassThrough } from 'node:stream';
import type { UpstreamResponse } from '../../transport.ts';
import { providerAnswer } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { sparkErrorStatus } from './errors.ts';

type Frame = Record<string, any>;

/**
 * One Spark exchange over a WebSocket (Node's global client): the request frame goes out once the
 * socket opens; answer frames come back until one has `header.status` 2. A stream is answered as SSE
 * events, one per frame (format xunfei-chat); a whole answer as the frames joined into one. An error
 * frame before any text becomes an error answer with the status its code deserves; a refused upgrade
 * is read again over plain HTTP, because the WebSocket client does not expose the refusal. The
 * transport's waits apply: for the first frame as for response headers, between frames as for a body.
 */
export function sparkSession(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const { headersTimeoutMs, bodyTimeoutMs } = input.transport.timeouts;
    const socket = new WebSocket(request.url);
    const events = new PassThrough();
    const frames: Frame[] = [];
    let answered = false;
    /** The SSE stream was handed out: later failures end it with an error. */
    let streaming = false;
    let silence: NodeJS.Timeout | undefined;

    const answer = (response: UpstreamResponse | Promise<UpstreamResponse>) => {
      answered = true;
      Promise.resolve(response).then(resolve, reject);
    };
    const finish = () => {
      clearTimeout(silence);
      input.signal.removeEventListener('abort', onAbort);
      if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN) socket.close();
    };
    const failed = (error: unknown) => {
      if (!answered) {
        answered = true;
        reject(error);
      } else if (streaming && !events.writableEnded) events.destroy(error as Error);
      finish();
    };
    const waitAtMost = (ms: number) => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        const error = new Error(`the Spark endpoint sent nothing for ${ms / 1000}s`);
        error.name = 'TimeoutError';
        failed(error);
      }, ms);
    };
    const onAbort = () => failed(input.signal.reason);
    input.signal.addEventListener('abort', onAbort, { once: true });
    waitAtMost(headersTimeoutMs);

    socket.onopen = () => socket.send(String(request.body));
    socket.onmessage = (message) => {
      waitAtMost(bodyTimeoutMs);
      let frame: Frame;
      try {
        frame = JSON.parse(String(message.data)) as Frame;
      } catch {
        return failed(new Error('the Spark endpoint sent a frame that is not JSON'));
      }
      const code = Number(frame.header?.code ?? 0);
      if (code !== 0) {
        if (answered) return failed(new Error(`Spark error ${code}: ${String(frame.header?.message ?? '')}`));
        answer(providerAnswer(sparkErrorStatus(code), 'application/json', Buffer.from(JSON.stringify(frame))));
        return finish();
      }
      const last = frame.header?.status === 2;
      if (input.stream) {
        if (!answered) {
          streaming = true;
          answer(providerAnswer(200, 'text/event-stream', events));
        }
        events.write(`data: ${JSON.stringify(frame)}\n\n`);
        if (last) events.end();
      } else {
        frames.push(frame);
        if (last) answer(providerAnswer(200, 'application/json', Buffer.from(JSON.stringify(joinFrames(frames)))));
      }
      if (last) finish();
    };
    socket.onerror = () => {
      if (answered) return failed(new Error('the Spark connection failed'));
      // The upgrade was refused (or the host unreachable): ask again over HTTP to learn why.
      const refusal = input.transport
        .send({ ...request, url: request.url.replace(/^ws/i, 'http'), body: undefined }, input.signal)
        .then((response) => {
          if (response.status >= 400) return response;
          throw new Error(`the Spark endpoint did not open a WebSocket (HTTP ${response.status})`);
        });
      answer(refusal);
      finish();
    };
    socket.onclose = () => {
      if (!answered || (streaming && !events.writableEnded)) {
        failed(new Error('the Spark endpoint closed the connection before the answer was complete'));
      }
      finish();
    };
  });
}

/** The frames of a whole answer as one: their text pieces (and function call) joined, the last header and usage. */
export function joinFrames(frames: Frame[]): Frame {
  const last = frames.at(-1) ?? {};
  let content = '';
  let call: Frame | undefined;
  for (const frame of frames) {
    for (const item of Array.isArray(frame.payload?.choices?.text) ? frame.payload.choices.text : []) {
      if (typeof item?.content === 'string') content += item.content;
      if (item?.function_call) call = item.function_call;
    }
  }
  const text: Frame = { role: 'assistant', content, index: 0, ...(call ? { function_call: call } : {}) };
  return {
    header: last.header,
    payload: { choices: { status: 2, seq: last.payload?.choices?.seq ?? 0, text: [text] }, usage: last.payload?.usage },
  };
}

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
 * is read again over plain HTTP, because the WebSocket client does not expose the refusal.
 */
export function sparkSession(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(request.url);
    const events = new PassThrough();
    const frames: Frame[] = [];
    let answered = false;
    /** The SSE stream was handed out: later failures end it with an error. */
    let streaming = false;
    const answer = (response: UpstreamResponse | Promise<UpstreamResponse>) => {
      answered = true;
      Promise.resolve(response).then(resolve, reject);
    };
    const stop = () => {
      if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN) socket.close();
    };
    const onAbort = () => {
      stop();
      if (!answered) {
        answered = true;
        reject(input.signal.reason);
      } else if (streaming) events.destroy(input.signal.reason);
    };
    input.signal.addEventListener('abort', onAbort, { once: true });
    const finish = () => {
      input.signal.removeEventListener('abort', onAbort);
      stop();
    };

    socket.onopen = () => socket.send(String(request.body));
    socket.onmessage = (message) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(message.data)) as Frame;
      } catch {
        return failed(new Error('the Spark endpoint sent a frame that is not JSON'));
      }
      const code = Number(frame.header?.code ?? 0);
      if (code !== 0) {
        const text = JSON.stringify(frame);
        if (!answered) answer(providerAnswer(sparkErrorStatus(code), 'application/json', Buffer.from(text)));
        else if (streaming) events.destroy(new Error(`Spark error ${code}: ${String(frame.header?.message ?? '')}`));
        return finish();
      }
      const last = frame.header?.status === 2;
      if (input.stream) {
        if (!answered) {
          streaming = true;
          answer(providerAnswer(200, 'text/event-stream', events));
        }
        events.write(`data: ${JSON.stringify(frame)}\n\n`);
        if (last) {
          events.end();
          finish();
        }
        return;
      }
      frames.push(frame);
      if (last) {
        answer(providerAnswer(200, 'application/json', Buffer.from(JSON.stringify(joinFrames(frames)))));
        finish();
      }
    };
    socket.onerror = () => {
      if (answered) return failed(new Error('the Spark connection failed'));
      // The upgrade was refused (or the host unreachable): ask again over HTTP to learn why.
      answer(
        input.transport
          .send({ ...request, url: request.url.replace(/^ws/i, 'http'), body: undefined }, input.signal)
          .then((refusal) => {
            if (refusal.status >= 400) return refusal;
            throw new Error(`the Spark endpoint did not open a WebSocket (HTTP ${refusal.status})`);
          }),
      );
      finish();
    };
    socket.onclose = () => {
      if (!answered) failed(new Error('the Spark endpoint closed the connection before answering'));
      else if (streaming && !events.writableEnded) events.destroy(new Error('the Spark endpoint closed mid-answer'));
      finish();
    };

    function failed(error: Error) {
      if (!answered) {
        answered = true;
        reject(error);
      } else if (streaming) events.destroy(error);
      finish();
    }
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

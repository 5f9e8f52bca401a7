import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Json } from '../../convert/types.ts';
import { sseData } from '../../sse.ts';
import type { UpstreamResponse } from '../../transport.ts';
import { jsonAnswer, providerAnswer } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { PREDICTION_EVENT } from './stream.ts';

/** Longest a prediction is polled for after Replicate's own wait (cold models can take minutes). */
export const REPLICATE_MAX_WAIT_MS = 5 * 60_000;
/** After a stream's done event, how long the prediction is polled for its final metrics. */
const METRICS_WAIT_MS = 5_000;

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

/**
 * A prediction exchange. Streamed: create, then read the prediction's `urls.stream` (SSE), and once
 * it ends append the finished prediction as a `prediction` event (its metrics bill the request).
 * Whole: create with `Prefer: wait`, polling the prediction if Replicate's wait ran out first; a
 * failed or canceled prediction becomes an error answer in Replicate's problem shape.
 */
export async function sendReplicate(
  request: UpstreamRequest,
  input: SendInput,
  maxWaitMs = REPLICATE_MAX_WAIT_MS,
): Promise<UpstreamResponse> {
  const { transport, signal } = input;
  const response = await transport.send(request, signal);
  if (response.status >= 400) return response;
  const created = (await response.body.json()) as Json;
  const auth = { authorization: request.headers.authorization ?? '' };
  const fetchPrediction = async (): Promise<Json> => {
    const url = created.urls?.get ?? new URL(`/v1/predictions/${created.id}`, request.url).toString();
    const answer = await transport.send({ url, method: 'GET', headers: auth }, signal);
    if (answer.status >= 400) throw new Error(`polling the prediction answered HTTP ${answer.status}`);
    return (await answer.body.json()) as Json;
  };

  if (input.stream) {
    if (typeof created.urls?.stream !== 'string') {
      return jsonAnswer(400, { title: 'Not streamable', detail: 'this model does not stream its output', status: 400 });
    }
    const stream = await transport.send(
      { url: created.urls.stream, method: 'GET', headers: { ...auth, accept: 'text/event-stream' } },
      signal,
    );
    if (stream.status >= 400) return stream;
    const withMetrics = withPrediction(stream.body, () => finished(fetchPrediction, METRICS_WAIT_MS, signal));
    return providerAnswer(200, 'text/event-stream', Readable.from(withMetrics));
  }

  let prediction = created;
  if (!TERMINAL.has(prediction.status)) prediction = await finished(fetchPrediction, maxWaitMs, signal);
  if (!TERMINAL.has(prediction.status)) {
    return jsonAnswer(504, { title: 'Timeout', detail: `the prediction did not finish within ${maxWaitMs / 1000}s` });
  }
  if (prediction.status !== 'succeeded') {
    const detail = prediction.status === 'failed' ? `prediction failed: ${prediction.error}` : 'prediction canceled';
    return jsonAnswer(502, { title: 'Prediction failed', detail, status: 502 });
  }
  // Metrics may trail the output by a moment: one more look when the answer has none yet.
  if (prediction.metrics?.input_token_count === undefined) {
    const polled = await fetchPrediction().catch(() => undefined);
    if (polled?.status === 'succeeded') prediction = polled;
  }
  return jsonAnswer(200, prediction);
}

/** Polls until the prediction is terminal or the wait runs out (then the last state seen). */
async function finished(fetchPrediction: () => Promise<Json>, waitMs: number, signal: AbortSignal): Promise<Json> {
  const deadline = Date.now() + waitMs;
  let prediction = await fetchPrediction();
  for (let delay = 100; !TERMINAL.has(prediction.status) && Date.now() + delay <= deadline; ) {
    await sleep(delay, undefined, { signal });
    delay = Math.min(delay * 2, 1000);
    prediction = await fetchPrediction();
  }
  return prediction;
}

/** The upstream stream's bytes, then the finished prediction as one more event (left out if it cannot be read). */
async function* withPrediction(
  upstream: AsyncIterable<Uint8Array>,
  prediction: () => Promise<Json>,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of upstream) yield chunk;
  const done = await prediction().catch(() => undefined);
  // A blank line first: the upstream's last event may lack its closing one.
  if (done) yield Buffer.from(`\n${sseData(JSON.stringify(done), PREDICTION_EVENT)}`);
}

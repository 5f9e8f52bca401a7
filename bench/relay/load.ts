/**
 * The relay benchmark's load generator, on undici: an open-loop generator that fires requests at a fixed
 * rate whatever the answers do (so a slow server shows up as latency, not as fewer requests), a closed
 * loop of N connections for the most requests a second, and the time to the first byte of SSE streams.
 * Times are in milliseconds from performance.now(), measured from the moment each request is handed to
 * the connection pool.
 */
import { Pool } from 'undici';

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export interface Summary {
  count: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface RateResult extends Summary {
  rate: number;
  /** Requests a second actually sent (lower than `rate` if the generator fell behind). */
  sentRate: number;
  /** Largest delay between a request's planned and actual start, in ms: the generator's own lag. */
  maxLagMs: number;
}

export interface SaturationResult extends Summary {
  connections: number;
  rps: number;
}

export interface StreamResult {
  /** Time to the first byte of the SSE body. */
  ttfb: Summary;
  /** Time to the end of the stream. */
  total: Summary;
  rate: number;
}

/** What one streamed answer of LONG_STREAM_TOKENS content events took, sequential streams one at a time. */
export interface LongStreamResult {
  /** Content events per stream (the mock adds a finish, a usage and a [DONE] event). */
  events: number;
  /** Time from sending the request to the end of the stream. */
  total: Summary;
}

/** max_tokens of a long stream: the mock answers with this many content events, back to back. */
const LONG_STREAM_TOKENS = 1000;

const chatBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  max_tokens: 32,
});

const streamBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  max_tokens: 32,
  stream: true,
  stream_options: { include_usage: true },
});

const longStreamBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Write a long answer.' }],
  max_tokens: LONG_STREAM_TOKENS,
  stream: true,
  stream_options: { include_usage: true },
});

export function summarize(values: ArrayLike<number>, errors = 0): Summary {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : NaN;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    errors,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

const pools = new Map<string, Pool>();

/** One connection pool per target for the whole run, so every phase after the warm-up finds warm connections. */
function pool(target: Target): Pool {
  let p = pools.get(target.url);
  if (!p) {
    p = new Pool(new URL(target.url).origin, {
      connections: 256,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    pools.set(target.url, p);
  }
  return p;
}

export async function closePools(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.destroy()));
  pools.clear();
}

/** One non-streaming chat request; resolves with its latency, or -1 for a failure. */
async function chatOnce(p: Pool, target: Target): Promise<number> {
  const started = performance.now();
  try {
    const answer = await p.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: target.headers,
      body: chatBody,
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200 || !text.includes('"usage"')) return -1;
    return performance.now() - started;
  } catch {
    return -1;
  }
}

/** One streaming chat request; resolves with [time to first body byte, time to end], or undefined on failure. */
async function streamOnce(p: Pool, target: Target): Promise<[number, number] | undefined> {
  const started = performance.now();
  try {
    const answer = await p.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: target.headers,
      body: streamBody,
    });
    let first = -1;
    let last = '';
    for await (const chunk of answer.body) {
      if (first < 0) first = performance.now() - started;
      last = (last + chunk.toString()).slice(-64);
    }
    if (answer.statusCode !== 200 || first < 0 || !last.includes('[DONE]')) return undefined;
    return [first, performance.now() - started];
  } catch {
    return undefined;
  }
}

/**
 * Fires `kind` requests at a fixed rate for `durationMs`, each at its planned time however many are
 * still in flight (open loop), and waits for all of them.
 */
async function openLoop<T>(
  target: Target,
  rate: number,
  durationMs: number,
  send: (p: Pool) => Promise<T>,
): Promise<{ results: T[]; sentRate: number; maxLagMs: number }> {
  const p = pool(target);
  const total = Math.max(1, Math.round((rate * durationMs) / 1000));
  const interval = 1000 / rate;
  const pending: Array<Promise<T>> = [];
  let maxLagMs = 0;
  const start = performance.now() + 2;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (pending.length < total && start + pending.length * interval <= now) {
        maxLagMs = Math.max(maxLagMs, now - (start + pending.length * interval));
        pending.push(send(p));
      }
      if (pending.length >= total) return resolve();
      setTimeout(tick, Math.max(0, start + pending.length * interval - performance.now()));
    };
    tick();
  });
  const sentSeconds = (performance.now() - start) / 1000;
  const results = await Promise.all(pending);
  return { results, sentRate: total / Math.max(sentSeconds, durationMs / 1000), maxLagMs };
}

/** Non-streaming chat requests at a fixed rate. */
export async function fixedRate(target: Target, rate: number, durationMs: number): Promise<RateResult> {
  const { results, sentRate, maxLagMs } = await openLoop(target, rate, durationMs, (p) => chatOnce(p, target));
  const ok = results.filter((r) => r >= 0);
  return { rate, sentRate, maxLagMs, ...summarize(ok, results.length - ok.length) };
}

/** Streaming chat requests at a fixed rate: time to first byte and to the end of the stream. */
export async function streamingRate(target: Target, rate: number, durationMs: number): Promise<StreamResult> {
  const { results } = await openLoop(target, rate, durationMs, (p) => streamOnce(p, target));
  const ok = results.filter((r): r is [number, number] => r !== undefined);
  const errors = results.length - ok.length;
  return {
    rate,
    ttfb: summarize(
      ok.map((r) => r[0]),
      errors,
    ),
    total: summarize(
      ok.map((r) => r[1]),
      errors,
    ),
  };
}

/** `connections` loops, each sending its next request as soon as the last is answered (closed loop). */
export async function saturate(target: Target, connections: number, durationMs: number): Promise<SaturationResult> {
  const p = pool(target);
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline) {
      const latency = await chatOnce(p, target);
      if (latency >= 0) latencies.push(latency);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const seconds = (performance.now() - started) / 1000;
  return { connections, rps: latencies.length / seconds, ...summarize(latencies, errors) };
}

/** One long stream; resolves with its whole time, or undefined when it failed or lost events. */
async function longStreamOnce(p: Pool, target: Target): Promise<number | undefined> {
  const started = performance.now();
  try {
    const answer = await p.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: target.headers,
      body: longStreamBody,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) chunks.push(chunk as Buffer);
    const total = performance.now() - started;
    const text = Buffer.concat(chunks).toString();
    const events = text.match(/^data:/gm)?.length ?? 0;
    // Every content event, the finish and usage events and [DONE] arrived.
    if (answer.statusCode !== 200 || events !== LONG_STREAM_TOKENS + 3 || !text.trimEnd().endsWith('[DONE]'))
      return undefined;
    return total;
  } catch {
    return undefined;
  }
}

/**
 * `count` long streams one after another on one connection, so each stream's time is the relay's work on
 * its events and nothing else (no queueing behind other requests).
 */
export async function longStreams(target: Target, count: number): Promise<LongStreamResult> {
  const p = pool(target);
  const times: number[] = [];
  let errors = 0;
  for (let i = 0; i < count; i++) {
    const time = await longStreamOnce(p, target);
    if (time === undefined) errors++;
    else times.push(time);
  }
  return { events: LONG_STREAM_TOKENS, total: summarize(times, errors) };
}

/** Checks that a target answers a chat and a stream with usage, before anything is measured. */
export async function checkTarget(target: Target): Promise<void> {
  const chat = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: target.headers,
    body: chatBody,
  });
  const body = (await chat.json()) as { usage?: unknown };
  if (chat.status !== 200 || !body.usage)
    throw new Error(`${target.name}: chat answered ${chat.status} ${JSON.stringify(body)}`);
  const stream = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: target.headers,
    body: streamBody,
  });
  const text = await stream.text();
  if (stream.status !== 200 || !text.includes('"usage"') || !text.trimEnd().endsWith('data: [DONE]')) {
    throw new Error(`${target.name}: stream answered ${stream.status} ${text.slice(0, 300)}`);
  }
  if ((await longStreamOnce(pool(target), target)) === undefined) {
    throw new Error(`${target.name}: a ${LONG_STREAM_TOKENS}-event stream did not arrive whole`);
  }
}

/** A closed loop whose results are thrown away, to warm the JIT and the connection pools. */
export async function warmUp(target: Target, durationMs: number): Promise<void> {
  await saturate(target, 64, durationMs);
  const p = pool(target);
  await Promise.all(Array.from({ length: 200 }, () => streamOnce(p, target)));
  for (let i = 0; i < 5; i++) await longStreamOnce(p, target);
}

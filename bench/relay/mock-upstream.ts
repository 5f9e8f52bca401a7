/**
 * The benchmark's upstream: a minimal OpenAI chat endpoint on loopback, run as its own process by
 * bench/relay.ts. `POST /v1/chat/completions` answers a fixed chat.completion with usage; with
 * `stream: true` it sends the first chunk at once and the rest 1 ms apart (so the first SSE byte travels
 * alone), then a usage chunk and `data: [DONE]`. A stream asking for `max_tokens` of LONG_STREAM_MIN_TOKENS
 * or more is a long answer instead: that many content events, each its own write, back to back with no
 * delay, then the finish, usage and `[DONE]` events, so its whole time is what the relays spend per event.
 * Prints `{"url": …}` once listening; exits when its standard input closes (the parent is gone).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const usage = {
  prompt_tokens: 14,
  completion_tokens: 8,
  total_tokens: 22,
  prompt_tokens_details: { cached_tokens: 0 },
};
const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello! How can I help you today?' },
        finish_reason: 'stop',
      },
    ],
    usage,
  }),
);

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

/** The stream's events in order; the first is written immediately, each next one 1 ms later. */
const events = [
  chunk({ role: 'assistant', content: 'Hello' }),
  chunk({ content: '! How can' }),
  chunk({ content: ' I help you' }),
  chunk({ content: ' today?' }),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', choices: [], usage })}\n\n`,
  'data: [DONE]\n\n',
];

/** A stream request with at least this many max_tokens gets the long, unpaced answer. */
const LONG_STREAM_MIN_TOKENS = 1000;
const token = chunk({ content: ' token' });

/** `count` one-token content events written back to back, as an upstream emits a long answer. */
function longStream(res: ServerResponse, count: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(events[0]!);
  for (let i = 1; i < count; i++) res.write(token);
  const longUsage = { ...usage, completion_tokens: count, total_tokens: usage.prompt_tokens + count };
  res.write(chunk({}, 'stop'));
  res.write(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', choices: [], usage: longUsage })}\n\n`,
  );
  res.end('data: [DONE]\n\n');
}

function stream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let next = 0;
  const send = () => {
    if (res.destroyed) return;
    const event = events[next++]!;
    if (next === events.length) res.end(event);
    else {
      res.write(event);
      setTimeout(send, 1);
    }
  };
  send();
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    // A cheap look at the flag instead of parsing every body: the bench's bodies are compact JSON.
    const body = Buffer.concat(chunks);
    if (body.includes('"stream":true')) {
      const maxTokens = Number((JSON.parse(body.toString()) as { max_tokens?: unknown }).max_tokens);
      return maxTokens >= LONG_STREAM_MIN_TOKENS ? longStream(res, maxTokens) : stream(res);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
    res.end(completion);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));

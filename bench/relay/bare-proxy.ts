/**
 * The baseline of the relay benchmark: the least a Node relay must do, with the gateway's own building
 * blocks (Fastify in front, a pooled undici Agent behind, same keep-alive and pool size) and nothing else —
 * no key auth, limits, routing, billing, logs or metrics. The body goes upstream as received and the
 * answer comes back piped, chunk by chunk for streams. Run as its own process by bench/relay.ts with
 * UPSTREAM_URL; prints `{"url": …}` once listening; exits when its standard input closes.
 */
import type { Readable } from 'node:stream';
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const upstream = process.env.UPSTREAM_URL;
if (!upstream) throw new Error('UPSTREAM_URL is required');

const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024 });
// The body is forwarded as bytes; nothing is parsed.
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

app.post('/v1/chat/completions', async (req, reply) => {
  const answer = await request(`${upstream}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' },
    body: req.body as Buffer,
    dispatcher: agent,
  });
  reply.code(answer.statusCode);
  const type = answer.headers['content-type'];
  if (type) reply.header('content-type', type);
  return reply.send(answer.body as Readable);
});

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(JSON.stringify({ url }));
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelType } from './registry.ts';
import { fetchUpstreamModels } from './upstream-models.ts';

// Workers AI's model search under an account: a catalogue of every task, given at most two per page here.
const CATALOGUE = [
  ['@cf/meta/llama-3.1-8b-instruct', 'Text Generation'],
  ['@cf/black-forest-labs/flux-1-schnell', 'Text-to-Image'],
  ['@cf/baai/bge-m3', 'Text Embeddings'],
  ['@cf/openai/whisper', 'Automatic Speech Recognition'],
  ['@cf/qwen/qwq-32b', 'Text Generation'],
];
const asked: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://cf');
    asked.push(`${url.pathname}${url.search}`);
    if (req.headers.authorization !== 'Bearer cf-token') {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ success: false, errors: [{ code: 10000, message: 'Authentication error' }] }));
    }
    const perPage = Math.min(2, Number(url.searchParams.get('per_page')));
    const page = Number(url.searchParams.get('page'));
    const result = CATALOGUE.slice((page - 1) * perPage, page * perPage).map(([name, task]) => ({
      name,
      task: { name: task },
    }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ success: true, result, result_info: { page, per_page: perPage, total_count: 5 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('fetchUpstreamModels for Cloudflare (39)', () => {
  const cloudflare = channelType(39)!;

  it('follows the pages the search gives and keeps only chat and embedding models', async () => {
    asked.length = 0;
    const models = await fetchUpstreamModels(cloudflare, { baseUrl: base, other: 'acc 1' }, 'cf-token');
    expect(models).toEqual(['@cf/baai/bge-m3', '@cf/meta/llama-3.1-8b-instruct', '@cf/qwen/qwq-32b']);
    expect(asked).toEqual(
      [1, 2, 3].map((page) => `/client/v4/accounts/acc%201/ai/models/search?per_page=100&page=${page}`),
    );
  });

  it('gives a refused token as UPSTREAM_REFUSED with Cloudflare’s message', async () => {
    await expect(fetchUpstreamModels(cloudflare, { baseUrl: base, other: 'acc' }, 'wrong')).rejects.toMatchObject({
      code: 'UPSTREAM_REFUSED',
      params: { status: 401 },
    });
  });
});

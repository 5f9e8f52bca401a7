import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consolePlugin } from './console.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-console-'));
const dist = path.join(dir, 'dist');

async function appOn(root: string): Promise<FastifyInstance> {
  const app = Fastify();
  app.setNotFoundHandler(async (request, reply) => reply.code(404).send({ notFound: request.url }));
  app.get('/api/status', async () => ({ success: true }));
  await app.register(consolePlugin, { root });
  await app.ready();
  return app;
}

let app: FastifyInstance;
beforeAll(async () => {
  mkdirSync(path.join(dist, 'assets'), { recursive: true });
  writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dist, 'logo.svg'), '<svg/>');
  writeFileSync(path.join(dist, '.env'), 'SECRET=1');
  app = await appOn(dist);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('console serving', () => {
  it('answers index.html, never cached, for / and every console route', async () => {
    for (const url of ['/', '/login', '/channel/edit/3', '/user/reset?token=x']) {
      const answer = await app.inject({ url });
      expect(answer.statusCode, url).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.headers['cache-control']).toBe('no-cache');
      expect(answer.body).toContain('id="root"');
    }
  });

  it('serves hashed assets for a year and other files for an hour', async () => {
    const asset = await app.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const logo = await app.inject({ url: '/logo.svg' });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['cache-control']).toBe('public, max-age=3600');
  });

  it("leaves gateway paths and missing assets to the gateway's 404", async () => {
    for (const url of [
      '/api/nope',
      '/rest/nope',
      '/v1/nope',
      '/v1beta/x',
      '/pg/x',
      '/assets/index-old.js',
      '/metrics',
      '/health/details',
    ]) {
      const answer = await app.inject({ url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.json()).toEqual({ notFound: url });
    }
    expect((await app.inject({ url: '/api/status' })).json()).toEqual({ success: true });
    expect((await app.inject({ method: 'POST', url: '/login' })).statusCode).toBe(404);
  });

  it('never serves dot files or files outside the build', async () => {
    expect((await app.inject({ url: '/.env' })).body).not.toContain('SECRET');
    expect((await app.inject({ url: '/..%2F..%2Fetc%2Fpasswd' })).body).not.toContain('root:');
  });

  it('explains how to build the console when there is no build', async () => {
    const bare = await appOn(path.join(dir, 'missing'));
    const answer = await bare.inject({ url: '/token' });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.body).toContain('npm run build -w console');
    expect((await bare.inject({ url: '/api/nope' })).statusCode).toBe(404);
    await bare.close();
  });
});

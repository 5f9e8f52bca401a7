import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build -w console` puts the console. */
export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../console/dist');

export interface ConsolePluginOptions {
  /** The built console (index.html and assets/); default console/dist. */
  root?: string;
}

/**
 * Paths that belong to the gateway itself: an unknown path under one of them keeps the gateway's 404
 * (the relay's OpenAI-shaped error, the /api envelope) instead of getting the console's index.html.
 */
const GATEWAY_PREFIXES = [
  '/api',
  '/rest',
  '/v1',
  '/v1beta',
  '/pg',
  '/mj',
  '/suno',
  '/kling',
  '/dashboard/billing',
  '/healthz',
  '/readyz',
  // Served on the private listener only (METRICS_PORT): here they are unknown paths, never the console.
  '/metrics',
  '/health',
];

const HASHED_ASSETS = 'assets/';
const YEAR_MS = 365 * 24 * 3600 * 1000;
const HOUR_MS = 3600 * 1000;

/**
 * Serves the built console at `/`: files as they are (hashed assets cached for a year, other files for an
 * hour), and index.html (never cached, so a new build is picked up at once) for every other GET, so that
 * the single-page app's routes (/login, /token, /channel/edit/3, …) load on refresh. Missing assets and
 * gateway paths answer the gateway's 404. Without a build, pages answer a short note saying how to build.
 */
export async function consolePlugin(app: FastifyInstance, options: ConsolePluginOptions): Promise<void> {
  const root = options.root ?? CONSOLE_DIST;
  await app.register(fastifyStatic, { root, serve: false, dotfiles: 'ignore', index: false });

  app.get<{ Params: { '*': string } }>('/*', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const urlPath = request.url.split('?')[0] ?? '/';
    if (GATEWAY_PREFIXES.some((prefix) => urlPath === prefix || urlPath.startsWith(`${prefix}/`))) {
      return reply.callNotFound();
    }
    const relative = request.params['*'] ?? '';
    if (relative.startsWith(HASHED_ASSETS)) {
      // A missing asset (an old build's hash) falls through to the 404 handler inside sendFile.
      return reply.sendFile(relative, { maxAge: YEAR_MS, immutable: true });
    }
    if (relative !== '' && (await isFileInside(root, relative))) {
      return reply.sendFile(relative, { maxAge: HOUR_MS });
    }
    if (!existsSync(path.join(root, 'index.html'))) return notBuilt(reply);
    return sendIndex(reply);
  });
}

function sendIndex(reply: FastifyReply) {
  reply.header('cache-control', 'no-cache');
  return reply.sendFile('index.html', { cacheControl: false });
}

async function isFileInside(root: string, relative: string): Promise<boolean> {
  const file = path.resolve(root, relative);
  if (!file.startsWith(root + path.sep)) return false;
  if (file.split(path.sep).some((part) => part.startsWith('.'))) return false;
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Console not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<h1>The console is not built yet</h1>
<p>The gateway is running (its API is at <a href="/api/status">/api/status</a>), but <code>console/dist</code> is missing.
Build the console once, then reload this page:</p>
<pre style="background: #f3f3f3; padding: 0.75rem">npm run build -w console</pre>
<p><code>npm start</code> builds it by itself when it is missing.</p>
<hr>
<p lang="zh">控制台尚未构建：运行 <code>npm run build -w console</code> 后刷新本页。</p>
</body>
</html>
`;

function notBuilt(reply: FastifyReply) {
  return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
}

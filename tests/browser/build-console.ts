import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const consoleDir = path.join(root, 'console');
const builtIndex = path.join(consoleDir, 'dist', 'index.html');

/** The newest modification time among the console's sources (what a build reads). */
function newestSource(): number {
  let newest = 0;
  const visit = (entry: string) => {
    if (!existsSync(entry)) return;
    const stats = statSync(entry);
    if (stats.isDirectory()) for (const name of readdirSync(entry)) visit(path.join(entry, name));
    else newest = Math.max(newest, stats.mtimeMs);
  };
  for (const name of ['src', 'public', 'index.html', 'vite.config.ts', 'package.json']) {
    visit(path.join(consoleDir, name));
  }
  return newest;
}

/** Whether console/dist is missing or older than a source file. */
export function consoleBuildIsStale(): boolean {
  return !existsSync(builtIndex) || statSync(builtIndex).mtimeMs < newestSource();
}

/**
 * vitest global setup: builds the console (a few seconds) when console/dist is missing or older than its
 * sources, once per run, before any browser test starts a gateway that serves it.
 */
export default function buildConsole(): void {
  if (!consoleBuildIsStale()) return;
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const started = Date.now();
  // vitest sets NODE_ENV=test, which would make Vite bundle React's development build: build as `npm run build` does.
  const build = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: consoleDir,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (build.status !== 0) throw new Error(`the console build failed (exit ${build.status})`);
  console.log(`Built the console in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

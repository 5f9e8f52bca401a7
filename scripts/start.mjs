// `npm start`: runs the gateway with a Node.js new enough for it (see node-bin.mjs), forwarding signals
// so that Ctrl-C and SIGTERM trigger the gateway's graceful shutdown. Builds the console first when
// console/dist is missing (a few seconds, once).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withMallocTunables } from './malloc-tunables.mjs';
import { nodeBinDir } from './node-bin.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = path.join(nodeBinDir(), 'node');

const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
if (!existsSync(path.join(root, 'console', 'dist', 'index.html'))) {
  if (existsSync(vite)) {
    console.error('Building the console (console/dist) ...');
    const build = spawnSync(node, [vite, 'build', '--logLevel', 'warn'], {
      cwd: path.join(root, 'console'),
      stdio: 'inherit',
    });
    if (build.status !== 0) console.error('The console build failed; the gateway starts without it.');
  } else {
    console.error('Vite is not installed (npm ci installs it), so the console is not built; the API works without it.');
  }
}
// Node's compile cache: every module comes compiled from it, so the gateway starts faster and never loads Node's
// TypeScript stripper (about 10 MiB less idle RSS). A new folder is filled before the first start
// (warm-compile-cache.mjs, a few seconds once); later starts keep it up to date. A folder the caller set is kept.
const compileCache = process.env.NODE_COMPILE_CACHE || path.join(root, 'node_modules', '.cache', 'node-compile');
if (!existsSync(compileCache)) {
  spawnSync(node, [path.join(root, 'scripts', 'warm-compile-cache.mjs'), compileCache], { stdio: 'inherit' });
}
const env = withMallocTunables({ ...process.env, NODE_COMPILE_CACHE: compileCache });
const child = spawn(node, [path.join(root, 'gateway', 'src', 'main.ts')], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

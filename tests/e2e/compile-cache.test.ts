// scripts/warm-compile-cache.mjs, as the gateway image's build and `npm start` run it: from the folder it fills,
// the gateway's modules (its entry points included) load without Node's TypeScript stripper, and importing the
// entry points runs nothing.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

/** Imports the gateway's entry points and its app in a fresh node; says whether amaro (the stripper) loaded. */
async function loadsTypeStripper(env: Record<string, string>): Promise<boolean> {
  const entries = ['main.ts', 'migrate.ts', 'gateway.ts'].map((file) =>
    pathToFileURL(path.join(root, 'gateway/src', file)),
  );
  const script = `${entries.map((url) => `await import(${JSON.stringify(url.href)});`).join('')}
console.log(JSON.stringify(process.moduleLoadList.some((name) => name.includes('amaro'))));`;
  // No DATABASE_URL and no DATA_DIR: an entry point that ran would create a database here, and not exit.
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim()) as boolean;
}

describe('the compile cache warm-compile-cache.mjs fills', { timeout: 120_000 }, () => {
  it('loads the gateway without the TypeScript stripper, which it needs without the cache', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'tollgate-compile-cache-'));
    folders.push(folder);
    await run(process.execPath, [path.join(root, 'scripts/warm-compile-cache.mjs'), folder], { timeout: 60_000 });
    expect(await loadsTypeStripper({ NODE_COMPILE_CACHE: folder })).toBe(false);
    expect(await loadsTypeStripper({})).toBe(true);
  });
});

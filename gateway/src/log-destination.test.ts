import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const destination = fileURLToPath(new URL('./log-destination.ts', import.meta.url));

/** Runs a process that logs `lines` lines in one go through the gateway's destination, then ends as told. */
function logAndEnd(lines: number, end: string): string[] {
  const script = `
    import { pino } from 'pino';
    import { logDestination } from ${JSON.stringify(destination)};
    const logger = pino({ base: null }, logDestination());
    for (let i = 0; i < ${lines}; i++) logger.info({ i }, 'line');
    ${end}
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return run.stdout.split('\n').filter(Boolean);
}

describe('logDestination', () => {
  // Lines queued behind an asynchronous write are written on exit: none is lost when the gateway stops.
  it('writes every line logged before process.exit', () => {
    const out = logAndEnd(20_000, 'process.exit(0);');
    expect(out).toHaveLength(20_000);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ i: 19_999, msg: 'line' });
  });

  it('writes every line logged before an uncaught exception ends the process', () => {
    const out = logAndEnd(20_000, "throw new Error('boom');");
    expect(out).toHaveLength(20_000);
  });
});

describe('logDestination in a quiet process', () => {
  // Held lines go out within the flush interval, not only once a batch is full or the process ends.
  it('writes a lone line while the process keeps running', async () => {
    const script = `
      import { pino } from 'pino';
      import { logDestination } from ${JSON.stringify(destination)};
      pino({ base: null }, logDestination()).info('alone');
      setTimeout(() => {}, 30_000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        child.once('exit', () => reject(new Error('exited before writing')));
      });
      expect(JSON.parse(line)).toMatchObject({ msg: 'alone' });
    } finally {
      child.kill('SIGKILL');
    }
  });
});

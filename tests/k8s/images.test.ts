// The container images (deploy/*.Dockerfile), proven without a Docker engine: what each image declares
// (digest-pinned bases, a numeric non-root user, OCI labels, a data volume its user owns), then a replay of
// every stage from exactly the files its COPY lines bring (tests/support/dockerfile-replay.ts) and a start of
// the result — the gateway on its embedded database answering /api/status, the operator failing only for
// want of a cluster. A Dockerfile that copies too little fails here: the last test drops tsconfig.base.json
// from the console stage and expects Vite's error.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mallocTunables } from '../../scripts/malloc-tunables.mjs';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import {
  type Dockerfile,
  finalOf,
  type Instruction,
  parseDockerfile,
  type Stage,
  stageEnv,
  stageLabels,
} from '../support/dockerfile.ts';
import { hostPath, type ReplayedStage, replayDockerfile } from '../support/dockerfile-replay.ts';
import { parseDockerignore } from '../support/dockerignore.ts';
import { spawnGateway } from '../support/gateway.ts';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const IMAGES = {
  gateway: parseDockerfile(read('deploy/gateway.Dockerfile')),
  operator: parseDockerfile(read('deploy/operator.Dockerfile')),
};
const VERSION = (JSON.parse(read('gateway/package.json')) as { version: string }).version;
// npm ci and the console build: minutes on two busy cores, most of it npm reading its cache.
const BUILD_MS = 600_000;
// A first start creates the embedded database (initdb in WebAssembly): seconds, more on a busy machine.
const START_MS = 120_000;

// The Node that runs the tests (Node 24, as in the base image) runs every RUN line and CMD.
const PATH = `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;

const final = (file: Dockerfile): Stage => file.stages.at(-1) as Stage;

let scratch: string;
// Stages already replayed, shared by every replay in this file (a stage both images share runs once).
const cache = new Map<string, Promise<ReplayedStage>>();

function replay(file: Dockerfile): Promise<Map<string, ReplayedStage>> {
  return replayDockerfile(file, {
    context: root,
    ignore: parseDockerignore(read('.dockerignore')),
    scratch,
    runEnv: {
      // npm ci reads the machine's npm cache first (the same command, without a download where it can).
      PATH,
      HOME: process.env.HOME ?? os.homedir(),
      ...(process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {}),
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    },
    cache,
  });
}

/** The image's user when the tests run as root (so file ownership is really tested), else the current one. */
const runAs = (stage: ReplayedStage) => (process.getuid?.() === 0 ? stage.user : undefined);

/** Files of a replayed image outside node_modules, relative to its working directory. */
function ownFiles(stage: ReplayedStage): string[] {
  const workdir = hostPath(stage.root, stage.workdir);
  return (readdirSync(workdir, { recursive: true }) as string[]).filter(
    (file) => !file.split(path.sep).includes('node_modules'),
  );
}

/** Packages the lockfile marks as development-only: none may reach an image. */
function devOnlyPackages(): string[] {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
  return Object.entries(lock.packages)
    .filter(([where, entry]) => entry.dev && where.includes('node_modules/'))
    .map(([where]) => where);
}

function expectProductionOnly(stage: ReplayedStage): void {
  const files = ownFiles(stage);
  expect(files.filter((f) => /\.test\.ts$|test-support\.ts$|(^|\/)tests?\//.test(f))).toEqual([]);
  expect(files.filter((f) => f.startsWith('console/src') || f.startsWith('console/node_modules'))).toEqual([]);
  const workdir = hostPath(stage.root, stage.workdir);
  expect(devOnlyPackages().filter((where) => existsSync(path.join(workdir, where)))).toEqual([]);
}

/** The gateway's Dockerfile with tsconfig.base.json left out of its console stage's COPY lines. */
function withoutBaseTsconfig(file: Dockerfile): Dockerfile {
  const trimmed = structuredClone(file);
  const consoleStage = trimmed.stages.find((s) => s.name === 'console') as Stage;
  consoleStage.instructions = consoleStage.instructions.flatMap<Instruction>((i) => {
    if (i.kind !== 'COPY') return [i];
    const sources = i.sources.filter((s) => s !== 'tsconfig.base.json');
    return sources.length > 0 ? [{ ...i, sources }] : [];
  });
  return trimmed;
}

// All three builds start together, as BuildKit builds independent stages side by side; each test awaits its own.
let builds: Record<'gateway' | 'operator' | 'trimmed', Promise<Map<string, ReplayedStage>>>;

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'tollgate-images-'));
  // The image's user (not the owner of this folder) must reach the files, as in a container.
  chmodSync(scratch, 0o755);
  builds = {
    gateway: replay(IMAGES.gateway),
    operator: replay(IMAGES.operator),
    trimmed: replay(withoutBaseTsconfig(IMAGES.gateway)),
  };
  // Awaited by the tests; a failure is theirs to report, not an unhandled rejection.
  for (const build of Object.values(builds)) build.catch(() => {});
});

afterAll(async () => {
  await Promise.allSettled(Object.values(builds ?? {}));
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, BUILD_MS);

describe('the replay', () => {
  it('parses continuations, quotes and ARG defaults, and refuses what it cannot replay', () => {
    const file = parseDockerfile(`# syntax=docker/dockerfile:1
ARG BASE=node@sha256:abc
FROM $BASE AS one
ARG V=1.2
LABEL a="x y" \\
  b=\${V}
RUN echo a \\
  && echo b
CMD ["node", "main.ts"]`);
    expect(file.stages[0]).toMatchObject({ name: 'one', from: 'node@sha256:abc' });
    expect(stageLabels(file.stages[0] as Stage)).toEqual({ a: 'x y', b: '1.2' });
    expect(finalOf(file.stages[0] as Stage, 'RUN')?.command).toBe('echo a && echo b');
    expect(() => parseDockerfile('FROM x\nADD a b')).toThrow('instruction ADD is not supported');
    expect(() => parseDockerfile('FROM x\nCMD node main.ts')).toThrow('exec form');
  });

  it('filters the context as .dockerignore does', () => {
    const ignored = parseDockerignore(read('.dockerignore'));
    expect(ignored('console/node_modules/vite/package.json')).toBe(true);
    expect(ignored('gateway/src/config.test.ts')).toBe(true);
    expect(ignored('data/PG_VERSION')).toBe(true);
    expect(ignored('gateway/src/config.ts')).toBe(false);
    expect(ignored('tsconfig.base.json')).toBe(false);
  });

  it('brings only what COPY names, without what .dockerignore excludes', async () => {
    const copyOf = (line: string) =>
      replay(parseDockerfile(`FROM node@sha256:${'0'.repeat(64)}\nWORKDIR /app\n${line}`)).then(
        (stages) => stages.get('0') as ReplayedStage,
      );
    const copied = await copyOf('COPY gateway/src/store store/');
    expect(ownFiles(copied)).toContain('store/open.ts');
    expect(ownFiles(copied).filter((f) => f.endsWith('.test.ts'))).toEqual([]);
    await expect(copyOf('COPY tests/support/wait.ts ./')).rejects.toThrow('excluded by .dockerignore');
    await expect(copyOf('COPY no-such-file ./')).rejects.toThrow('not found in the build context');
  });
});

describe.each(Object.entries(IMAGES))('the %s image declares', (name, file) => {
  it('every base image by digest', () => {
    for (const stage of file.stages) expect(stage.from).toMatch(/^[\w.\-/:]+@sha256:[0-9a-f]{64}$/);
  });

  it('a numeric non-root user and an exec-form node CMD', () => {
    const user = finalOf(final(file), 'USER')?.user ?? '';
    expect(user).toMatch(/^\d+:\d+$/);
    expect(user.split(':').map(Number)).not.toContain(0);
    expect(finalOf(final(file), 'CMD')?.argv).toEqual(['node', `${name}/src/main.ts`]);
  });

  it('OCI labels, versioned like the gateway package', () => {
    const labels = stageLabels(final(file));
    for (const key of ['title', 'description', 'version', 'source', 'licenses']) {
      expect(labels).toHaveProperty(`org.opencontainers.image.${key}`);
    }
    expect(labels['org.opencontainers.image.title']).toBe(`tollgate-${name}`);
    expect(labels['org.opencontainers.image.description']).not.toBe('');
    expect(labels['org.opencontainers.image.version']).toBe(VERSION);
  });
});

it('the gateway image keeps its embedded database in a volume its user owns', () => {
  const stage = final(IMAGES.gateway);
  const dataDir = stageEnv(stage).DATA_DIR;
  expect(dataDir).toMatch(/^\//);
  expect(finalOf(stage, 'VOLUME')?.values).toContain(dataDir);
  const workdir = finalOf(stage, 'WORKDIR')?.path ?? '/';
  const creates = stage.instructions.find((i) => i.kind === 'COPY' && path.posix.resolve(workdir, i.dest) === dataDir);
  expect(creates).toMatchObject({ chown: finalOf(stage, 'USER')?.user });
});

describe('the gateway image, replayed', () => {
  let image: ReplayedStage;
  beforeAll(async () => {
    image = (await builds.gateway).get(final(IMAGES.gateway).name) as ReplayedStage;
  }, BUILD_MS);

  it(
    'starts without DATABASE_URL on the embedded database and serves the API and the console',
    async () => {
      const gateway = await spawnGateway(
        // METRICS_PORT: a private listener on any free port, wherever the gateway has one.
        { ...image.env, PATH, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0' },
        START_MS,
        { argv: image.cmd ?? [], cwd: hostPath(image.root, image.workdir), user: runAs(image) },
      );
      try {
        const status = (await (await fetch(`${gateway.url}/api/status`)).json()) as { success: boolean };
        expect(status.success).toBe(true);
        expect(gateway.logs.find((l) => l.msg === 'database opened')).toMatchObject({ database: 'pglite' });
        expect(readdirSync(image.env.DATA_DIR as string)).toContain('PG_VERSION');
        const page = await (await fetch(`${gateway.url}/`)).text();
        expect(page).toContain('<div id="root"');
      } finally {
        expect(await gateway.stop()).toBe(0);
      }
    },
    START_MS,
  );

  it('ships Node’s compile cache of the gateway’s modules, filled by the build', () => {
    const folder = image.env.NODE_COMPILE_CACHE as string;
    // One folder per Node version, V8 flags and uid, holding a file per compiled module.
    const cached = (readdirSync(folder, { recursive: true }) as string[]).filter((entry) => entry.includes(path.sep));
    expect(cached.length).toBeGreaterThan(200);
  });

  it('sets the malloc trim threshold every launcher sets', () => {
    expect(image.env.GLIBC_TUNABLES).toBe(mallocTunables);
  });

  it('holds production files only', () => {
    expectProductionOnly(image);
    expect(existsSync(path.join(hostPath(image.root, image.workdir), 'console/dist/index.html'))).toBe(true);
  });
});

describe('the operator image, replayed', () => {
  let image: ReplayedStage;
  beforeAll(async () => {
    image = (await builds.operator).get(final(IMAGES.operator).name) as ReplayedStage;
  }, BUILD_MS);

  it('holds production files only, and no console', () => {
    expectProductionOnly(image);
    expect(ownFiles(image).filter((f) => f.startsWith('console'))).toEqual([]);
  });

  it.runIf(hasPostgres())(
    'migrates a database, then fails only for want of a cluster',
    async () => {
      const database = await createTestDatabase();
      try {
        const env = { ...image.env, PATH, DATABASE_URL: database.url as string };
        const migrated = await runImage(image, ['node', 'gateway/src/migrate.ts'], env);
        expect(migrated.code, migrated.output).toBe(0);
        const help = await runImage(image, [...(image.cmd ?? []), '--help'], env);
        expect(help.code, help.output).toBe(0);
        expect(help.output).toContain('remove-finalizers');
        // No KUBECONFIG, an empty home and no service account: nothing says where a cluster is.
        const home = mkdtempSync(path.join(scratch, 'home-'));
        const run = await runImage(image, image.cmd ?? [], {
          ...env,
          HOME: home,
          METRICS_PORT: '0',
          METRICS_HOST: '127.0.0.1',
        });
        expect(run.code, run.output).toBe(1);
        expect(run.output).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module|Cannot find package/);
        expect(run.output).toContain('Operator failed to start');
        expect(run.output).toContain('no Kubernetes cluster configured');
      } finally {
        await database.drop();
      }
    },
    START_MS,
  );
});

it(
  'a console stage without tsconfig.base.json fails the build with Vite’s error',
  async () => {
    const consoleStage = (file: Dockerfile) => JSON.stringify(file.stages.find((s) => s.name === 'console'));
    expect(consoleStage(withoutBaseTsconfig(IMAGES.gateway))).not.toBe(consoleStage(IMAGES.gateway));
    await expect(builds.trimmed).rejects.toThrow(/stage console: RUN npm run build[\s\S]*Tsconfig not found/);
  },
  BUILD_MS,
);

/** Runs a command in a replayed image until it exits; a guard kills it if it never does. */
function runImage(
  image: ReplayedStage,
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: hostPath(image.root, image.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...runAs(image),
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), START_MS / 2);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    });
  });
}

// Replays a parsed Dockerfile without a Docker engine, to prove that an image builds and runs from exactly
// what its COPY lines bring. Every stage gets a scratch folder standing for the container's `/`: COPY brings
// files from the build context (honouring .dockerignore) or from an earlier stage's folder (--from), RUN
// executes in the mapped WORKDIR with the Node that runs the tests, and the final folder can then be started
// with its CMD. The base image itself is not replayed: RUN commands must stay relative to WORKDIR, and a
// stage sees no files but the ones copied into it (its folder has no node_modules or package.json above it).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, lchown, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Dockerfile, Instruction, Stage } from './dockerfile.ts';
import type { IgnoreRule } from './dockerignore.ts';

export interface ReplayOptions {
  /** The build context (the repository root). */
  context: string;
  ignore: IgnoreRule;
  /** Where stage folders are made; must have no node_modules or package.json above it. */
  scratch: string;
  /** Environment for RUN commands before the stage's own ENV (PATH to Node, the npm cache). */
  runEnv: Record<string, string>;
  /** Stages already replayed, by content: a stage two Dockerfiles share is replayed once. */
  cache?: Map<string, Promise<ReplayedStage>>;
}

export interface ReplayedStage {
  stage: Stage;
  /** The folder standing for the container's `/`. */
  root: string;
  /** The container's working directory, as a container path. */
  workdir: string;
  /** The stage's ENV, with paths under the final WORKDIR mapped into `root`. */
  env: Record<string, string>;
  /** USER as `uid:gid` numbers, when the stage sets one. */
  user: { uid: number; gid: number } | undefined;
  cmd: string[] | undefined;
}

export class ReplayError extends Error {
  override name = 'ReplayError';
}

/** The host path of a container path in a stage folder. */
export function hostPath(root: string, containerPath: string): string {
  return path.join(root, path.posix.resolve('/', containerPath));
}

function numericUser(spec: string): { uid: number; gid: number } {
  const match = /^(\d+)(?::(\d+))?$/.exec(spec);
  if (!match) throw new ReplayError(`user "${spec}" is not numeric uid[:gid]`);
  return { uid: Number(match[1]), gid: Number(match[2] ?? match[1]) };
}

function stageKey(stage: Stage, fromKeys: string[]): string {
  return createHash('sha256')
    .update(JSON.stringify({ from: stage.from, instructions: stage.instructions, fromKeys }))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Replays every stage, each as soon as the stages it copies from are done (independent stages run side by
 * side, as BuildKit builds them); returns them by name.
 */
export async function replayDockerfile(file: Dockerfile, options: ReplayOptions): Promise<Map<string, ReplayedStage>> {
  assertIsolated(options.scratch);
  const cache = options.cache ?? new Map<string, Promise<ReplayedStage>>();
  const started = new Map<string, { key: string; result: Promise<ReplayedStage> }>();
  for (const stage of file.stages) {
    const fromNames = stage.instructions.flatMap((i) => (i.kind === 'COPY' && i.from ? [i.from] : []));
    const sources = fromNames.map((name) => {
      const source = started.get(name);
      if (!source) throw new ReplayError(`stage ${stage.name}: COPY --from=${name} names no earlier stage`);
      return [name, source] as const;
    });
    const key = stageKey(
      stage,
      sources.map(([, source]) => source.key),
    );
    let result = cache.get(key);
    if (!result) {
      result = Promise.all(sources.map(async ([name, source]) => [name, await source.result] as const)).then((ready) =>
        replayStage(stage, path.join(options.scratch, `${stage.name}-${key}`), new Map(ready), options),
      );
      cache.set(key, result);
    }
    started.set(stage.name, { key, result });
  }
  const entries = await Promise.all([...started].map(async ([name, { result }]) => [name, await result] as const));
  return new Map(entries);
}

async function replayStage(
  stage: Stage,
  root: string,
  earlier: Map<string, ReplayedStage>,
  options: ReplayOptions,
): Promise<ReplayedStage> {
  await mkdir(root, { recursive: true });
  let workdir = '/';
  let user: ReplayedStage['user'];
  let cmd: string[] | undefined;
  const env: Record<string, string> = {};
  for (const instruction of stage.instructions) {
    switch (instruction.kind) {
      case 'WORKDIR':
        workdir = path.posix.resolve(workdir, instruction.path);
        await mkdir(hostPath(root, workdir), { recursive: true });
        break;
      case 'COPY':
        await replayCopy(instruction, root, workdir, earlier, options);
        break;
      case 'RUN':
        await run(stage.name, instruction.command, hostPath(root, workdir), { ...options.runEnv, ...env });
        break;
      case 'ENV':
        Object.assign(env, instruction.vars);
        break;
      case 'USER':
        user = numericUser(instruction.user);
        break;
      case 'CMD':
        cmd = instruction.argv;
        break;
      default:
        // ARG, LABEL, EXPOSE, VOLUME: metadata only, checked by the tests on the parsed stage.
        break;
    }
  }
  return { stage, root, workdir, env: mapPaths(env, root, workdir), user, cmd };
}

/** ENV values naming paths under WORKDIR, pointed into the stage folder (other paths are the base image's). */
function mapPaths(env: Record<string, string>, root: string, workdir: string): Record<string, string> {
  const inside = (value: string) => workdir !== '/' && (value === workdir || value.startsWith(`${workdir}/`));
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, inside(value) ? hostPath(root, value) : value]),
  );
}

async function replayCopy(
  copy: Extract<Instruction, { kind: 'COPY' }>,
  root: string,
  workdir: string,
  earlier: Map<string, ReplayedStage>,
  options: ReplayOptions,
): Promise<void> {
  const source = copy.from ? earlier.get(copy.from) : undefined;
  if (copy.from && !source) throw new ReplayError(`COPY --from=${copy.from}: no such stage`);
  const dest = hostPath(root, path.posix.resolve(workdir, copy.dest));
  const intoFolder = copy.dest.endsWith('/') || copy.sources.length > 1;
  for (const src of copy.sources) {
    if (/[*?[]/.test(src)) throw new ReplayError(`COPY ${src}: wildcards are not supported by the replay`);
    const relative = path.posix.normalize(src.replace(/^\/+/, ''));
    const from = source ? hostPath(source.root, src) : path.join(options.context, relative);
    if (!source && relative !== '.' && options.ignore(relative)) {
      throw new ReplayError(`COPY ${src}: excluded by .dockerignore`);
    }
    if (!existsSync(from)) {
      throw new ReplayError(`COPY ${src}: not found in ${source ? `stage ${copy.from}` : 'the build context'}`);
    }
    const isFolder = (await stat(from)).isDirectory();
    const target = !isFolder && intoFolder ? path.join(dest, path.basename(from)) : dest;
    await cp(from, target, {
      recursive: true,
      verbatimSymlinks: true,
      force: true,
      filter: (file) => source !== undefined || !options.ignore(path.relative(options.context, file) || '.'),
    });
    if (copy.chown) await chownTree(target, numericUser(copy.chown));
  }
}

/** COPY --chown, applied when the tests run as root (only root may give files away); else left as is. */
async function chownTree(target: string, owner: { uid: number; gid: number }): Promise<void> {
  if (process.getuid?.() !== 0) return;
  await lchown(target, owner.uid, owner.gid);
  if (!(await stat(target)).isDirectory()) return;
  for (const entry of await readdir(target, { recursive: true })) {
    await lchown(path.join(target, entry), owner.uid, owner.gid);
  }
}

function run(stageName: string, command: string, cwd: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new ReplayError(`stage ${stageName}: RUN ${command} exited with ${code}\n${output}`));
    });
  });
}

/** A stage folder must not see the repository's node_modules or manifests through Node's upward lookup. */
function assertIsolated(scratch: string): void {
  for (let dir = path.resolve(scratch); ; dir = path.dirname(dir)) {
    for (const name of ['node_modules', 'package.json']) {
      if (existsSync(path.join(dir, name))) throw new ReplayError(`${path.join(dir, name)} would leak into the replay`);
    }
    if (dir === path.dirname(dir)) return;
  }
}

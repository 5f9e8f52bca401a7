// A Dockerfile parser for the instructions deploy/*.Dockerfile use, so that tests can replay an image build
// without a Docker engine (tests/support/dockerfile-replay.ts) and check what the image declares. Anything it
// does not understand is an error, never silently skipped: a new instruction must be taught to the replay.

export type Instruction =
  | { kind: 'ARG'; name: string; value: string | undefined }
  | { kind: 'WORKDIR'; path: string }
  | { kind: 'COPY'; from: string | undefined; chown: string | undefined; sources: string[]; dest: string }
  | { kind: 'RUN'; command: string }
  | { kind: 'ENV'; vars: Record<string, string> }
  | { kind: 'LABEL'; labels: Record<string, string> }
  | { kind: 'USER'; user: string }
  | { kind: 'EXPOSE'; values: string[] }
  | { kind: 'VOLUME'; values: string[] }
  | { kind: 'CMD'; argv: string[] };

export interface Stage {
  /** The `AS` name, or the stage's index as a string. */
  name: string;
  /** The base image after ARG substitution, e.g. `node:24-slim@sha256:…`. */
  from: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  stages: Stage[];
}

export class DockerfileError extends Error {
  override name = 'DockerfileError';
}

/** Logical lines: comments (and parser directives such as `# syntax=`) dropped, `\` continuations joined. */
function logicalLines(text: string): string[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push((pending + line).trim());
    pending = '';
  }
  if (pending.trim()) lines.push(pending.trim());
  return lines.filter(Boolean);
}

/** Splits shell-like words, honouring single and double quotes (quotes removed). */
function words(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | undefined;
  let inWord = false;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new DockerfileError(`unterminated quote in: ${text}`);
  if (inWord) out.push(current);
  return out;
}

/** `${NAME}` and `$NAME` replaced from `vars`; an unknown name becomes empty, as in Docker. */
function expand(text: string, vars: Record<string, string | undefined>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => {
    return vars[(braced ?? bare) as string] ?? '';
  });
}

function keyValues(body: string, vars: Record<string, string | undefined>, what: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const word of words(body)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new DockerfileError(`${what} needs key=value pairs, got "${word}"`);
    result[word.slice(0, eq)] = expand(word.slice(eq + 1), vars);
  }
  return result;
}

function parseCopy(body: string, vars: Record<string, string | undefined>): Instruction {
  const parts = words(expand(body, vars));
  let from: string | undefined;
  let chown: string | undefined;
  while (parts[0]?.startsWith('--')) {
    const flag = parts.shift() as string;
    const [name, value] = flag.slice(2).split('=', 2);
    if (name === 'from') from = value;
    else if (name === 'chown') chown = value;
    else throw new DockerfileError(`COPY flag ${flag} is not supported by the replay`);
  }
  if (parts.length < 2) throw new DockerfileError(`COPY needs a source and a destination: COPY ${body}`);
  const dest = parts.pop() as string;
  return { kind: 'COPY', from, chown, sources: parts, dest };
}

function parseCmd(body: string): string[] {
  let argv: unknown;
  try {
    argv = JSON.parse(body);
  } catch {
    throw new DockerfileError(`CMD must use the exec form (a JSON array), got: ${body}`);
  }
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
    throw new DockerfileError(`CMD must be a JSON array of strings, got: ${body}`);
  }
  return argv;
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string | undefined> = {};
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  let vars: Record<string, string | undefined> = {};
  for (const line of logicalLines(text)) {
    const match = /^(\w+)\s*(.*)$/s.exec(line);
    const keyword = match?.[1]?.toUpperCase() ?? '';
    const body = match?.[2] ?? '';
    if (keyword === 'FROM') {
      const [image, as, name, ...rest] = words(expand(body, globalArgs));
      if (!image || (as !== undefined && (as.toUpperCase() !== 'AS' || !name)) || rest.length > 0) {
        throw new DockerfileError(`FROM must be "FROM <image> [AS <name>]", got: ${line}`);
      }
      stage = { name: name ?? String(stages.length), from: image, instructions: [] };
      stages.push(stage);
      vars = {};
      continue;
    }
    if (keyword === 'ARG') {
      const eq = body.indexOf('=');
      const name = (eq < 0 ? body : body.slice(0, eq)).trim();
      const arg = { name, value: eq < 0 ? undefined : (words(body.slice(eq + 1))[0] ?? '') };
      if (!stage) globalArgs[arg.name] = arg.value;
      else {
        vars[arg.name] = arg.value ?? globalArgs[arg.name];
        stage.instructions.push({ kind: 'ARG', ...arg });
      }
      continue;
    }
    if (!stage) throw new DockerfileError(`${keyword} before the first FROM`);
    stage.instructions.push(parseInstruction(keyword, body, vars));
    const last = stage.instructions.at(-1);
    if (last?.kind === 'ENV') Object.assign(vars, last.vars);
  }
  if (stages.length === 0) throw new DockerfileError('no FROM line');
  return { stages };
}

function parseInstruction(keyword: string, body: string, vars: Record<string, string | undefined>): Instruction {
  switch (keyword) {
    case 'WORKDIR':
      return { kind: 'WORKDIR', path: expand(body.trim(), vars) };
    case 'COPY':
      return parseCopy(body, vars);
    case 'RUN':
      return { kind: 'RUN', command: body };
    case 'ENV':
      return { kind: 'ENV', vars: keyValues(body, vars, 'ENV') };
    case 'LABEL':
      return { kind: 'LABEL', labels: keyValues(body, vars, 'LABEL') };
    case 'USER':
      return { kind: 'USER', user: expand(body.trim(), vars) };
    case 'EXPOSE':
      return { kind: 'EXPOSE', values: words(expand(body, vars)) };
    case 'VOLUME':
      return { kind: 'VOLUME', values: words(expand(body, vars)) };
    case 'CMD':
      return { kind: 'CMD', argv: parseCmd(body) };
    default:
      throw new DockerfileError(`instruction ${keyword} is not supported by the replay`);
  }
}

/** The last value an instruction of `kind` sets in a stage (what the image ends up with). */
export function finalOf<K extends Instruction['kind']>(
  stage: Stage,
  kind: K,
): Extract<Instruction, { kind: K }> | undefined {
  return stage.instructions.filter((i): i is Extract<Instruction, { kind: K }> => i.kind === kind).at(-1);
}

/** Every ENV and LABEL of a stage merged, later ones winning. */
export function stageEnv(stage: Stage): Record<string, string> {
  return Object.assign({}, ...stage.instructions.map((i) => (i.kind === 'ENV' ? i.vars : {})));
}

export function stageLabels(stage: Stage): Record<string, string> {
  return Object.assign({}, ...stage.instructions.map((i) => (i.kind === 'LABEL' ? i.labels : {})));
}

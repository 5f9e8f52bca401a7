import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The coding-agent CLIs the project installs from npm (root devDependencies), run headless against a
 * base URL in a scratch home: no user configuration is read, nothing is written outside the scratch
 * folders, and the CLIs' own traffic (updates, telemetry, feedback) is switched off.
 */

const require = createRequire(import.meta.url);

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface AgentCliInput {
  /** The gateway (or a proxy in front of it), without /v1. */
  baseUrl: string;
  /** The Tollgate key, `sk-` included. */
  apiKey: string;
  model: string;
  prompt: string;
  /** Where the CLI works: its tool runs here. */
  workdir: string;
  /** A scratch folder for the CLI's home and configuration. */
  home: string;
}

/** A CLI that does not finish in this long is killed, so a hang fails the test instead of stalling it. */
const KILL_AFTER_MS = 180_000;

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // stdin closed: Codex reads a prompt continuation from an open stdin.
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const baseEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' });

/**
 * Claude Code's native binary. Its postinstall copies the binary of the platform package over
 * bin/claude.exe, a shell stub; where install scripts did not run, the package's own launcher
 * (cli-wrapper.cjs) finds the same binary.
 */
function claudeCommand(): { command: string; args: string[] } {
  const root = path.dirname(require.resolve('@anthropic-ai/claude-code/package.json'));
  const bin = path.join(root, 'bin', 'claude.exe');
  const magic = Buffer.alloc(4);
  const fd = openSync(bin, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return { command: bin, args: [] };
  return { command: process.execPath, args: [path.join(root, 'cli-wrapper.cjs')] };
}

/**
 * `claude -p` with JSON output: one turn, the Bash tool allowed without a prompt, other traffic off.
 * The answer's `result` is the final text.
 */
export function runClaudeCode(input: AgentCliInput): Promise<CliResult> {
  const { command, args } = claudeCommand();
  const configDir = path.join(input.home, '.claude');
  mkdirSync(configDir, { recursive: true });
  return run(
    command,
    [
      ...args,
      '-p',
      input.prompt,
      '--output-format',
      'json',
      '--model',
      input.model,
      '--allowedTools',
      'Bash',
      '--no-session-persistence',
    ],
    input.workdir,
    {
      ...baseEnv(input.home),
      CLAUDE_CONFIG_DIR: configDir,
      ANTHROPIC_BASE_URL: input.baseUrl,
      ANTHROPIC_API_KEY: input.apiKey,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  );
}

/** The environment variable the Codex configuration names as the provider's key. */
const CODEX_KEY_VARIABLE = 'TOLLGATE_API_KEY';

/**
 * `codex exec` with a scratch CODEX_HOME whose config.toml defines Tollgate as a Responses provider;
 * commands run without sandbox or approval (the test's scratch folder is the sandbox), outside a git
 * repository, nothing persisted. Events are JSON lines on stdout; the final text is also written to
 * `<home>/last-message.txt`.
 */
export async function runCodex(input: AgentCliInput): Promise<CliResult & { lastMessage: string }> {
  const codexHome = path.join(input.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      `model = ${JSON.stringify(input.model)}`,
      'model_provider = "tollgate"',
      // Reasoning on, so that thinking crosses the gateway both ways.
      'model_reasoning_effort = "medium"',
      '',
      '[model_providers.tollgate]',
      'name = "Tollgate"',
      `base_url = ${JSON.stringify(`${input.baseUrl}/v1`)}`,
      `env_key = ${JSON.stringify(CODEX_KEY_VARIABLE)}`,
      'wire_api = "responses"',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
  const lastMessageFile = path.join(input.home, 'last-message.txt');
  const result = await run(
    process.execPath,
    [
      require.resolve('@openai/codex/bin/codex.js'),
      'exec',
      '--strict-config',
      '--skip-git-repo-check',
      '--ephemeral',
      '--dangerously-bypass-approvals-and-sandbox',
      '--json',
      '--output-last-message',
      lastMessageFile,
      input.prompt,
    ],
    input.workdir,
    { ...baseEnv(input.home), CODEX_HOME: codexHome, [CODEX_KEY_VARIABLE]: input.apiKey },
  );
  const lastMessage = existsSync(lastMessageFile) ? readFileSync(lastMessageFile, 'utf8') : '';
  return { ...result, lastMessage };
}

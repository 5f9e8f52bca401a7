import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

const rulesDir = path.join(root, 'deploy/prometheus');
/** The gateway's rule file (the chart carries identical copies of every rule file). */
export const RULES_FILE = path.join(rulesDir, 'tollgate-rules.yaml');
/** Every rule file: the gateway's and the operator's. */
export const RULES_FILES = readdirSync(rulesDir)
  .filter((file) => /\.ya?ml$/.test(file))
  .sort()
  .map((file) => path.join(rulesDir, file));

/** Prometheus's promtool (Debian package `prometheus`; .ci/run installs it), or undefined with a warning. */
export const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((candidate) => existsSync(candidate));
if (!promtool) console.warn('promtool not found (apt-get install prometheus): skipping the promtool tests');

/** Runs promtool; its exit status and everything it printed. */
export function runPromtool(args: string[]): { status: number | null; output: string } {
  if (!promtool) throw new Error('promtool is not installed');
  const result = spawnSync(promtool, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

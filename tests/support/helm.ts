import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/** The helm binary from scripts/helm.mjs (installed into .tools/bin on first use), or why there is none. */
export function findHelm(): { helm?: string; reason?: string } {
  try {
    const out = execFileSync(process.execPath, [path.join(root, 'scripts/helm.mjs')], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
    const helm = out.trim().split('\n').at(-1) ?? '';
    if (!existsSync(helm)) return { reason: `scripts/helm.mjs printed "${helm}", which does not exist` };
    return { helm };
  } catch (error) {
    return { reason: `scripts/helm.mjs could not install helm: ${(error as Error).message.split('\n')[0]}` };
  }
}

/**
 * `helm template` of the chart as release `tg` in `namespace` (minimal values plus `--set`s), as YAML. Throws
 * with helm's message when there is no helm or the chart does not render.
 */
export function renderChart(namespace: string, sets: string[] = []): string {
  const { helm, reason } = findHelm();
  if (!helm) throw new Error(reason);
  const args = ['template', 'tg', 'charts/tollgate', '--namespace', namespace];
  args.push('-f', 'charts/tollgate/ci/minimal-values.yaml');
  for (const set of sets) args.push('--set', set);
  return execFileSync(helm, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

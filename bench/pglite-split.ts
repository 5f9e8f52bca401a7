/**
 * Where the embedded gateway's CPU goes per relayed request: its own process and its database's process,
 * next to the bare proxy's, in the same conditions. Starts the relay bench's mock, bare proxy and embedded
 * gateway (bench/relay/*: the same setup, pinning and request), warms them up, then ROUNDS times runs the
 * closed loop of 64 connections against the bare proxy and the gateway in turn and reads each process's
 * CPU time from /proc. CPU time per request, unlike req/s, hardly depends on what else the machine runs,
 * though a busy machine still inflates it (shared caches): compare figures of one run, not across runs.
 *
 *   node bench/pglite-split.ts          BENCH_SPLIT_ROUNDS (default 4), BENCH_SPLIT_SECONDS (default 5)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchGateway } from './relay/gateway.ts';
import { closePools, saturate, type Target, warmUp } from './relay/load.ts';
import { ownCpuSecondsOf, pinning, pinSelf, processTree, spawnNode, waitForJson } from './relay/processes.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_SPLIT_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SPLIT_SECONDS ?? 5);
const cleanups: Array<() => Promise<void>> = [];

/** µs of CPU per request of each process, over one closed-loop run against `target`. */
async function perRequest(target: Target, pids: () => number[]): Promise<{ rps: number; us: number[] }> {
  const members = pids();
  const before = members.map(ownCpuSecondsOf);
  const result = await saturate(target, 64, SECONDS * 1000);
  const us = members.map((pid, i) => ((ownCpuSecondsOf(pid) - before[i]!) * 1e6) / result.count);
  return { rps: result.count / SECONDS, us };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  pinSelf(pinning.loadCore);
  const mock = spawnNode('mock upstream', [path.join(here, 'relay/mock-upstream.ts')], { core: pinning.loadCore });
  cleanups.push(() => mock.stop());
  const mockUrl = await waitForJson(mock, (line) => line.url as string | undefined);
  const bare = spawnNode('bare proxy', [path.join(here, 'relay/bare-proxy.ts')], {
    core: pinning.serverCore,
    env: { UPSTREAM_URL: mockUrl },
  });
  cleanups.push(() => bare.stop());
  const bareUrl = await waitForJson(bare, (line) => line.url as string | undefined);
  const gateway = await startBenchGateway({
    name: 'gateway, embedded',
    core: pinning.serverCore,
    upstreamUrl: mockUrl,
    logLevel: 'info',
    cleanups,
  });
  const json = { 'content-type': 'application/json' };
  const bareTarget: Target = { name: 'bare proxy', url: bareUrl, headers: { ...json, authorization: 'Bearer x' } };
  const gatewayTarget: Target = {
    name: 'gateway',
    url: gateway.url,
    headers: { ...json, authorization: `Bearer ${gateway.key}` },
  };
  await warmUp(bareTarget, 3000);
  await warmUp(gatewayTarget, 3000);
  const rows: Array<{ bare: number; gateway: number; database: number; rps: number; bareRps: number }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const b = await perRequest(bareTarget, () => [bare.pid]);
    // The gateway's own process first, then its database's (its one child).
    const g = await perRequest(gatewayTarget, () => processTree(gateway.child.pid).slice(0, 2));
    rows.push({ bare: b.us[0]!, gateway: g.us[0]!, database: g.us[1] ?? 0, rps: g.rps, bareRps: b.rps });
    console.log(
      `round ${round}: bare ${b.us[0]!.toFixed(0)} µs (${b.rps.toFixed(0)} req/s); gateway ${g.us[0]!.toFixed(0)} + database ${(g.us[1] ?? 0).toFixed(0)} µs (${g.rps.toFixed(0)} req/s)`,
    );
  }
  const m = (key: keyof (typeof rows)[number]) => median(rows.map((r) => r[key]));
  console.log(
    JSON.stringify({
      bareUs: m('bare'),
      gatewayUs: m('gateway'),
      databaseUs: m('database'),
      databaseShare: m('database') / (m('gateway') + m('database')),
      bareShareOfGateway: m('bare') / (m('gateway') + m('database')),
    }),
  );
}

try {
  await main();
} finally {
  await closePools().catch(() => {});
  for (const step of cleanups.reverse()) await step().catch(() => {});
}

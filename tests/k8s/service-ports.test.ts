// Must hold (issue 12): a request through the user-facing Service port gets 404 for /metrics.
//
// The chart's half: the user Service has no metrics port (tests/k8s/chart.test.ts). The gateway's half: the
// port behind that Service does not serve /metrics, which lives on METRICS_PORT. This test joins the two: it
// renders the chart, follows the user Service's targetPort to the gateway container's port number, starts a
// real gateway with the rendered container's environment and asks that port for /metrics.
//
// EXPECTED TO FAIL until the gateway's private metrics listener (METRICS_PORT, the gateway part of issue 12)
// is merged: before that, the main port still serves /metrics. Run it after the merge.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createTestDatabase } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, spawnGateway, testNamespace } from '../support/gateway.ts';
import { findHelm } from '../support/helm.ts';
import { closedPort } from '../support/secrets.ts';

const root = path.resolve(import.meta.dirname, '../..');
const chartDir = path.join(root, 'charts/tollgate');

type K8sObject = { kind: string; metadata: { name: string }; spec: any };

function render(args: string[]): K8sObject[] {
  const { helm, reason } = findHelm();
  if (!helm) throw new Error(`no helm: ${reason}`);
  const result = spawnSync(helm, ['template', 'tg', chartDir, '--namespace', 'tollgate', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

describe('the user-facing Service port', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let gateway: GatewayProcess;
  let userPort: number;
  let metricsPort: number;

  beforeAll(async () => {
    // Free ports for the rendered container, so the gateway runs with the chart's own PORT and METRICS_PORT.
    const [http, metrics] = [await closedPort(), await closedPort()];
    const objects = render([
      '-f',
      path.join(chartDir, 'ci/minimal-values.yaml'),
      '--set',
      `gateway.port=${http}`,
      '--set',
      `gateway.metricsPort=${metrics}`,
    ]);
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'tg-tollgate')!;
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'tg-tollgate')!;
    const container = deployment.spec.template.spec.containers.find((c: any) => c.name === 'gateway');
    const targetPort = service.spec.ports[0].targetPort as string;
    userPort = container.ports.find((p: any) => p.name === targetPort).containerPort;
    metricsPort = container.ports.find((p: any) => p.name === 'metrics').containerPort;
    expect(userPort).toBe(http);

    // The rendered plain environment; the connection strings come from the test's database and Redis.
    const rendered: Record<string, string> = {};
    for (const e of container.env) if (typeof e.value === 'string') rendered[e.name] = e.value;
    database = await createTestDatabase();
    gateway = await spawnGateway({
      ...gatewayEnv(database.options, testNamespace()),
      ...rendered,
      // The pod's 0.0.0.0, on loopback here; the pods migrate in the chart's Job, this one at start.
      HOST: '127.0.0.1',
      MIGRATE_ON_START: 'true',
    });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await database?.drop();
  });

  it('answers 404 for /metrics, which only the private metrics port serves', async () => {
    const viaService = await fetch(`http://127.0.0.1:${userPort}/metrics`);
    expect(viaService.status).toBe(404);
    expect(await viaService.text()).not.toContain('tollgate_');
    const status = await fetch(`http://127.0.0.1:${userPort}/api/status`);
    expect(status.status).toBe(200);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('tollgate_');
  });
});

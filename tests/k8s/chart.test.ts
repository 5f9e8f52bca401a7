// The Helm chart (charts/tollgate): lint, render with the least values and with every option on, and check
// every rendered object — built-in kinds against kubernetes-models' schemas, CRDs as apiextensions objects,
// Prometheus Operator kinds by shape — plus what matters for running it: probes, the restricted Pod
// Security profile, the Secret keys the pods read, RBAC, hooks, and that values.schema.json, the README's
// configuration table and the gateway's own config loader agree.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../gateway/src/config.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { findHelm } from '../support/helm.ts';
import { closedPort } from '../support/secrets.ts';

const root = path.resolve(import.meta.dirname, '../..');
const chartDir = path.join(root, 'charts/tollgate');
const minimalValues = path.join(chartDir, 'ci/minimal-values.yaml');
const allOnValues = path.join(chartDir, 'ci/all-on-values.yaml');
const namespacedValues = path.join(chartDir, 'ci/namespaced-operator-values.yaml');
const openshiftValues = path.join(chartDir, 'ci/openshift-values.yaml');
const CI_VALUES = [
  'minimal-values.yaml',
  'all-on-values.yaml',
  'namespaced-operator-values.yaml',
  'openshift-values.yaml',
];
const NAMESPACE = 'tollgate-system';
const RELEASE = 'tg';

/** Folders the chart carries as copies (scripts/helm.mjs --sync writes them): source, suffixes, copy. */
const MIRRORS = [
  { from: 'crds', suffixes: ['.yaml'], to: 'charts/tollgate/files/crds' },
  { from: 'deploy/prometheus', suffixes: ['.yaml', '.yml'], to: 'charts/tollgate/files/prometheus' },
  { from: 'deploy/grafana', suffixes: ['.json'], to: 'charts/tollgate/files/dashboards' },
];

const { helm, reason } = findHelm();
if (!helm) console.warn(`tests/k8s/chart.test.ts: skipping the chart tests: ${reason}`);

type K8sObject = { apiVersion: string; kind: string; metadata: Record<string, any>; [key: string]: any };

function runHelm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(helm!, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `helm template` with these arguments; throws with helm's message when it fails. */
function render(args: string[], chart = chartDir): K8sObject[] {
  const { status, stdout, stderr } = runHelm(['template', RELEASE, chart, '--namespace', NAMESPACE, ...args]);
  if (status !== 0) throw new Error(`helm template failed (${status}): ${stderr}`);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(stdout)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value as K8sObject);
  }
  return objects;
}

/** helm template's error text for values that must be refused. */
function renderError(args: string[]): string {
  const { status, stderr } = runHelm(['template', RELEASE, chartDir, '--namespace', NAMESPACE, ...args]);
  expect(status, 'helm template should have failed').not.toBe(0);
  return stderr;
}

const find = (objects: K8sObject[], kind: string, name?: string): K8sObject[] =>
  objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));

function one(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = find(objects, kind, name);
  expect(found, `exactly one ${kind}${name ? ` ${name}` : ''}`).toHaveLength(1);
  return found[0]!;
}

const byComponent = (objects: K8sObject[], kind: string, component: string): K8sObject =>
  one(
    objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === component),
    kind,
  );

// --- validation of every rendered object -------------------------------------------------------------------

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Pod': Pod,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': CustomResourceDefinition,
};
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * The part of the Gateway API v1 HTTPRoute schema (gateway.networking.k8s.io, standard channel) the chart
 * renders, written from the spec: kubernetes-models carries no Gateway API schemas. parentRefs 1-32 with a
 * name, hostnames as RFC 1123 names (a leading wildcard allowed), rules with PathPrefix/Exact matches and
 * backendRefs naming a Service port by number (HTTPRoute backends have no port names).
 */
const HTTP_ROUTE_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'gateway.networking.k8s.io/v1' },
    kind: { const: 'HTTPRoute' },
    spec: {
      type: 'object',
      additionalProperties: false,
      properties: {
        parentRefs: {
          type: 'array',
          minItems: 1,
          maxItems: 32,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: {
              group: { type: 'string', maxLength: 253 },
              kind: { type: 'string', minLength: 1, maxLength: 63 },
              namespace: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
              name: { type: 'string', minLength: 1, maxLength: 253 },
              sectionName: { type: 'string', minLength: 1, maxLength: 253 },
              port: { type: 'integer', minimum: 1, maximum: 65535 },
            },
          },
        },
        hostnames: {
          type: 'array',
          maxItems: 16,
          items: {
            type: 'string',
            minLength: 1,
            maxLength: 253,
            pattern: '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
          },
        },
        rules: {
          type: 'array',
          minItems: 1,
          maxItems: 16,
          items: {
            type: 'object',
            additionalProperties: false,
            properties: {
              matches: {
                type: 'array',
                maxItems: 64,
                items: {
                  type: 'object',
                  properties: {
                    path: {
                      type: 'object',
                      additionalProperties: false,
                      properties: {
                        type: { enum: ['Exact', 'PathPrefix', 'RegularExpression'] },
                        value: { type: 'string', pattern: '^/', maxLength: 1024 },
                      },
                    },
                  },
                },
              },
              backendRefs: {
                type: 'array',
                minItems: 1,
                maxItems: 16,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['name', 'port'],
                  properties: {
                    group: { const: '' },
                    kind: { const: 'Service' },
                    name: { type: 'string', minLength: 1, maxLength: 253 },
                    namespace: { type: 'string', minLength: 1, maxLength: 63 },
                    port: { type: 'integer', minimum: 1, maximum: 65535 },
                    weight: { type: 'integer', minimum: 0, maximum: 1000000 },
                  },
                },
              },
            },
          },
        },
      },
      required: ['parentRefs'],
    },
  },
};
const validateHttpRoute = new Ajv({ strict: false, allErrors: true }).compile(HTTP_ROUTE_SCHEMA);

/** The shape the Prometheus Operator's CRDs require (kubernetes-models carries no schema for them). */
function checkMonitoring(object: K8sObject): void {
  expect(object.apiVersion).toBe('monitoring.coreos.com/v1');
  if (object.kind === 'ServiceMonitor') {
    expect(object.spec.selector.matchLabels, 'ServiceMonitor selector').toBeTypeOf('object');
    expect(object.spec.endpoints.length).toBeGreaterThan(0);
    for (const endpoint of object.spec.endpoints) {
      expect(endpoint.port).toMatch(DNS_LABEL);
      expect(endpoint.path).toBe('/metrics');
      expect(endpoint.interval).toMatch(/^\d+(ms|s|m|h)$/);
      expect(endpoint.scrapeTimeout).toMatch(/^\d+(ms|s|m|h)$/);
    }
  } else if (object.kind === 'PrometheusRule') {
    expect(Array.isArray(object.spec.groups)).toBe(true);
    const names = new Set<string>();
    for (const group of object.spec.groups) {
      expect(group.name).toBeTypeOf('string');
      expect(names.has(group.name), `duplicate rule group ${group.name}`).toBe(false);
      names.add(group.name);
      expect(Array.isArray(group.rules)).toBe(true);
      for (const rule of group.rules) {
        expect(typeof rule.alert === 'string' || typeof rule.record === 'string', 'rule has alert or record').toBe(
          true,
        );
        expect(String(rule.expr ?? '').length, 'rule has an expr').toBeGreaterThan(0);
      }
    }
  } else {
    throw new Error(`no check for ${object.apiVersion} ${object.kind}`);
  }
}

function validateAll(objects: K8sObject[]): void {
  expect(objects.length).toBeGreaterThan(0);
  const seen = new Set<string>();
  for (const object of objects) {
    const id = `${object.apiVersion}/${object.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
    expect(seen.has(id), `rendered twice: ${id}`).toBe(false);
    seen.add(id);
    expect(object.metadata.name, id).toMatch(DNS_SUBDOMAIN);
    expect(object.metadata.name.length, id).toBeLessThanOrEqual(63);
    if (CLUSTER_SCOPED.has(object.kind)) expect(object.metadata.namespace, id).toBeUndefined();
    else expect(object.metadata.namespace, `${id} has a namespace`).toBeTypeOf('string');
    for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
      expect(String(value), `${id} label ${key}`).toMatch(LABEL_VALUE);
      expect(String(value).length, `${id} label ${key}`).toBeLessThanOrEqual(63);
    }
    if (object.kind !== 'CustomResourceDefinition') {
      expect(object.metadata.labels?.['app.kubernetes.io/name'], id).toBe('tollgate');
      expect(object.metadata.labels?.['app.kubernetes.io/instance'], id).toBe(RELEASE);
      expect(object.metadata.labels?.['app.kubernetes.io/managed-by'], id).toBe('Helm');
    }
    if (object.apiVersion === 'monitoring.coreos.com/v1') {
      checkMonitoring(object);
      continue;
    }
    if (object.kind === 'HTTPRoute') {
      expect(validateHttpRoute(object) ? [] : validateHttpRoute.errors, id).toEqual([]);
      continue;
    }
    const Model = MODELS[`${object.apiVersion}/${object.kind}`];
    if (!Model) throw new Error(`no validator for ${id}`);
    try {
      new Model(object).validate();
    } catch (error) {
      throw new Error(`${id} is not valid: ${(error as Error).message}`);
    }
  }
}

// --- pods ----------------------------------------------------------------------------------------------------

const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim'];

/**
 * The restricted Pod Security Standard, plus a read-only root filesystem with a writable /tmp. With
 * `platformAssignsIds` (OpenShift's restricted SCC) the pod names no user, group or fsGroup of its own.
 */
function expectRestricted(podSpec: any, where: string, platformAssignsIds = false): void {
  const pod = podSpec.securityContext ?? {};
  expect(pod.runAsNonRoot, `${where}: runAsNonRoot`).toBe(true);
  if (platformAssignsIds) {
    for (const key of ['runAsUser', 'runAsGroup', 'fsGroup']) expect(pod[key], `${where}: ${key}`).toBeUndefined();
  } else {
    expect(pod.runAsUser, `${where}: runAsUser`).toBeGreaterThan(0);
  }
  expect(pod.seccompProfile?.type, `${where}: seccomp`).toBe('RuntimeDefault');
  for (const key of ['hostNetwork', 'hostPID', 'hostIPC']) expect(podSpec[key], `${where}: ${key}`).toBeFalsy();
  for (const volume of podSpec.volumes ?? []) {
    const type = Object.keys(volume).find((k) => k !== 'name');
    expect([...RESTRICTED_VOLUMES, 'projected', 'secret'], `${where}: volume ${volume.name}`).toContain(type);
  }
  const tmp = (podSpec.volumes ?? []).find((v: any) => v.emptyDir);
  expect(tmp, `${where}: an emptyDir for /tmp`).toBeDefined();
  for (const container of [...(podSpec.initContainers ?? []), ...podSpec.containers]) {
    const sc = container.securityContext ?? {};
    const name = `${where}/${container.name}`;
    expect(sc.allowPrivilegeEscalation, `${name}: allowPrivilegeEscalation`).toBe(false);
    expect(sc.privileged ?? false, `${name}: privileged`).toBe(false);
    expect(sc.readOnlyRootFilesystem, `${name}: readOnlyRootFilesystem`).toBe(true);
    expect(sc.runAsNonRoot ?? pod.runAsNonRoot, `${name}: runAsNonRoot`).toBe(true);
    expect(sc.runAsUser ?? pod.runAsUser, `${name}: runAsUser`).not.toBe(0);
    expect(sc.capabilities?.drop, `${name}: drop ALL`).toContain('ALL');
    for (const cap of sc.capabilities?.add ?? []) expect(cap, `${name}: capability`).toBe('NET_BIND_SERVICE');
    expect(sc.seccompProfile?.type ?? pod.seccompProfile?.type, `${name}: seccomp`).toBe('RuntimeDefault');
    const mount = (container.volumeMounts ?? []).find((m: any) => m.mountPath === '/tmp');
    expect(mount?.name, `${name}: /tmp on the emptyDir`).toBe(tmp.name);
  }
}

const container = (workload: K8sObject, name: string): any =>
  workload.spec.template.spec.containers.find((c: any) => c.name === name);

const envOf = (c: any, name: string): any => (c.env ?? []).find((e: any) => e.name === name);

/**
 * Every secretKeyRef of every pod points at a Secret the chart renders (and the key is in it) or at one of
 * the existing Secrets named in the values; no reference is optional.
 */
function expectSecretRefsResolve(objects: K8sObject[], existingSecrets: string[] = []): void {
  for (const workload of [...find(objects, 'Deployment'), ...find(objects, 'Job')]) {
    for (const c of workload.spec.template.spec.containers) {
      for (const env of c.env ?? []) {
        const ref = env.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const where = `${workload.metadata.name}/${c.name} ${env.name}`;
        expect(ref.optional ?? false, `${where}: not optional`).toBe(false);
        const rendered = find(objects, 'Secret', ref.name)[0];
        if (rendered) expect(Object.keys(rendered.data ?? {}), where).toContain(ref.key);
        else expect(existingSecrets, `${where}: an existing Secret`).toContain(ref.name);
      }
    }
  }
}

/** The environment a container gets: plain values as they are, Secret references as a stand-in value. */
function envMap(c: any): Record<string, string> {
  const stand: Record<string, string> = {
    DATABASE_URL: 'postgres://u:p@db:5432/tollgate',
    REDIS_URL: 'redis://redis:6379',
    SECRET_KEY: 'a-secret-of-more-than-16-chars',
  };
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = stand[e.name] ?? 'x';
    else if (e.valueFrom?.fieldRef) env[e.name] = 'pod-0';
  }
  return env;
}

/** Helm's coalescing of a values file over the defaults: maps merge, everything else replaces. */
function merge(base: any, over: any): any {
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return over;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? merge(base[key], value) : value;
  return out;
}

/** The operator's own config loader, once operator/src/config.ts exists. */
async function operatorConfigLoader(): Promise<((env: Record<string, string>) => unknown) | undefined> {
  const file = path.join(root, 'operator/src/config.ts');
  if (!existsSync(file)) return undefined;
  const module = await import(file);
  return (env) => module.loadConfig(env, () => NAMESPACE, 'test');
}

const selects = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

// --- the tests -------------------------------------------------------------------------------------------------

describe.skipIf(!helm)('Helm chart charts/tollgate', () => {
  let minimal: K8sObject[];
  let allOn: K8sObject[];
  let namespaced: K8sObject[];
  let openshift: K8sObject[];

  beforeAll(() => {
    minimal = render(['-f', minimalValues]);
    allOn = render(['-f', allOnValues]);
    namespaced = render(['-f', namespacedValues]);
    openshift = render(['-f', openshiftValues]);
  });

  it('is a Helm v2 chart whose appVersion is the gateway version', () => {
    const chart = parseYaml(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8'));
    const gateway = JSON.parse(readFileSync(path.join(root, 'gateway/package.json'), 'utf8'));
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('tollgate');
    expect(chart.appVersion).toBe(gateway.version);
  });

  it('passes helm lint --strict with every values file in ci/', () => {
    expect(readdirSync(path.join(chartDir, 'ci')).sort()).toEqual([...CI_VALUES].sort());
    for (const values of [minimalValues, allOnValues, namespacedValues, openshiftValues]) {
      const { status, stdout, stderr } = runHelm(['lint', '--strict', chartDir, '-f', values]);
      expect(status, `${stdout}\n${stderr}`).toBe(0);
    }
  });

  it('installs (client-side dry run) with its hooks and notes', () => {
    const args = ['install', RELEASE, chartDir, '--namespace', NAMESPACE, '--dry-run=client'];
    const minimalRun = runHelm([...args, '-f', minimalValues]);
    expect(minimalRun.status, minimalRun.stderr).toBe(0);
    expect(minimalRun.stdout).toContain('HOOKS:');
    expect(minimalRun.stdout).toContain('SECRET_KEY is not set');
    const allOnRun = runHelm([...args, '-f', allOnValues]);
    expect(allOnRun.status, allOnRun.stderr).toBe(0);
    expect(allOnRun.stdout).toContain('SECRET_KEY from Secret tollgate-connections');
    expect(allOnRun.stdout).toContain('https://ai.example.com/');
  });

  it('carries exact copies of crds/, deploy/prometheus/ and deploy/grafana/ (node scripts/helm.mjs --sync)', () => {
    const list = (dir: string, suffixes: string[]): string[] =>
      existsSync(dir)
        ? readdirSync(dir, { recursive: true, encoding: 'utf8' })
            .filter((name) => suffixes.some((s) => name.endsWith(s)))
            .map((name) => path.basename(name))
            .sort()
        : [];
    const findPath = (dir: string, name: string): string =>
      path.join(dir, readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((n) => path.basename(n) === name)!);
    for (const { from, suffixes, to } of MIRRORS) {
      const source = path.join(root, from);
      const copy = path.join(root, to);
      const names = list(source, suffixes);
      expect(list(copy, suffixes), `${to} lists the same files as ${from}`).toEqual(names);
      for (const name of names) {
        const same = readFileSync(findPath(source, name)).equals(readFileSync(path.join(copy, name)));
        expect(same, `${to}/${name} equals ${from}/${name} byte for byte`).toBe(true);
      }
    }
  });

  it('renders valid objects for the least values', () => {
    validateAll(minimal);
    expectSecretRefsResolve(minimal);
  });

  it('renders valid objects with every option on', () => {
    validateAll(allOn);
    expectSecretRefsResolve(allOn, ['tollgate-connections', 'tollgate-redis']);
    for (const kind of [
      'Ingress',
      'HTTPRoute',
      'NetworkPolicy',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'ServiceMonitor',
      'Job',
      'Pod',
      'ClusterRole',
      'Role',
      'CustomResourceDefinition',
    ]) {
      expect(find(allOn, kind).length, kind).toBeGreaterThan(0);
    }
    // Every connection string comes from an existing Secret: the chart renders no Secret of its own.
    expect(find(allOn, 'Secret')).toHaveLength(0);
  });

  it('renders valid objects for a namespaced operator with one Secret per variable', () => {
    validateAll(namespaced);
    expectSecretRefsResolve(namespaced, ['tollgate-postgres', 'tollgate-redis', 'tollgate-master-key']);
    const gateway = container(byComponent(namespaced, 'Deployment', 'gateway'), 'gateway');
    expect(envOf(gateway, 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({ name: 'tollgate-postgres', key: 'uri' });
    expect(envOf(gateway, 'REDIS_URL').valueFrom.secretKeyRef).toEqual({ name: 'tollgate-redis', key: 'uri' });
    expect(envOf(gateway, 'SECRET_KEY').valueFrom.secretKeyRef).toEqual({ name: 'tollgate-master-key', key: 'key' });
    expect(find(namespaced, 'Secret')).toHaveLength(0);
    expect(
      find(namespaced, 'ClusterRole').filter((r) => r.rules.some((x: any) => x.apiGroups.includes('tollgate.dev'))),
    ).toHaveLength(0);
    for (const namespace of ['team-a', 'team-b'])
      expect(find(namespaced, 'Role').some((r) => r.metadata.namespace === namespace)).toBe(true);
    const operator = container(byComponent(namespaced, 'Deployment', 'operator'), 'operator');
    expect(envOf(operator, 'WATCH_NAMESPACES').value).toBe('team-a,team-b');
  });

  it('renders valid objects for OpenShift: no user, group or fsGroup of its own, restricted otherwise', () => {
    validateAll(openshift);
    const pods = [
      ...find(openshift, 'Deployment').map((d) => [d.metadata.name, d.spec.template.spec] as const),
      ...find(openshift, 'Job').map((j) => [j.metadata.name, j.spec.template.spec] as const),
      ...find(openshift, 'Pod').map((p) => [p.metadata.name, p.spec] as const),
    ];
    expect(pods.length).toBeGreaterThanOrEqual(4);
    for (const [name, spec] of pods) expectRestricted(spec, name, true);
    // The defaults do set them, so the OpenShift values are what removes them.
    for (const deployment of find(minimal, 'Deployment')) {
      expect(deployment.spec.template.spec.securityContext.runAsUser).toBe(1000);
      expect(deployment.spec.template.spec.securityContext.fsGroup).toBe(1000);
    }
    // A security context can be changed key by key.
    const custom = render(['-f', minimalValues, '--set', 'podSecurityContext.runAsUser=4242']);
    expect(byComponent(custom, 'Deployment', 'gateway').spec.template.spec.securityContext.runAsUser).toBe(4242);
  });

  it('runs the gateway with probes, a graceful stop and the restricted profile', () => {
    for (const objects of [minimal, allOn]) {
      const deployment = byComponent(objects, 'Deployment', 'gateway');
      const spec = deployment.spec.template.spec;
      const gateway = container(deployment, 'gateway');
      expect(gateway.command).toEqual(['node', 'gateway/src/main.ts']);
      expect(gateway.ports).toEqual([
        { name: 'http', containerPort: 3000, protocol: 'TCP' },
        { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
      ]);
      expect(envOf(gateway, 'PORT').value).toBe('3000');
      expect(envOf(gateway, 'METRICS_PORT').value).toBe('9090');
      // The migration Job migrates; pods wait for the schema instead.
      expect(envOf(gateway, 'MIGRATE_ON_START').value).toBe('false');
      expect(gateway.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(gateway.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(gateway.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(gateway.resources.requests.cpu).toBeDefined();
      expect(gateway.resources.requests.memory).toBeDefined();
      expect(gateway.resources.limits.memory).toBeDefined();
      expectRestricted(spec, deployment.metadata.name);
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.topologySpreadConstraints.map((t: any) => t.topologyKey)).toEqual([
        'topology.kubernetes.io/zone',
        'kubernetes.io/hostname',
      ]);
      // SIGTERM comes after the preStop sleep; the kubelet must wait for the sleep and the whole drain.
      const sleep = Number(gateway.lifecycle.preStop.exec.command[1]);
      expect(gateway.lifecycle.preStop.exec.command[0]).toBe('sleep');
      expect(sleep).toBeGreaterThan(0);
      const shutdownMs = Number(envOf(gateway, 'SHUTDOWN_TIMEOUT_MS')?.value ?? 30_000);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(shutdownMs / 1000 + sleep);
      expect(envOf(gateway, 'NODE_NAME').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
      // What the chart hands the gateway is what the gateway's own config loader accepts.
      expect(() => loadConfig(envMap(gateway))).not.toThrow();
      const sa = one(objects, 'ServiceAccount', spec.serviceAccountName);
      expect(sa.automountServiceAccountToken).toBe(false);
    }
  });

  it('reads DATABASE_URL, REDIS_URL and SECRET_KEY from the Secret the values name', () => {
    const minimalGateway = container(byComponent(minimal, 'Deployment', 'gateway'), 'gateway');
    const secret = one(minimal, 'Secret', `${RELEASE}-tollgate`);
    expect(Object.keys(secret.data).sort()).toEqual(['DATABASE_URL', 'REDIS_URL']);
    expect(Buffer.from(secret.data.DATABASE_URL, 'base64').toString()).toMatch(/^postgres:\/\//);
    for (const name of ['DATABASE_URL', 'REDIS_URL']) {
      expect(envOf(minimalGateway, name).valueFrom.secretKeyRef).toEqual({ name: secret.metadata.name, key: name });
    }
    expect(envOf(minimalGateway, 'SECRET_KEY')).toBeUndefined();

    const gateway = container(byComponent(allOn, 'Deployment', 'gateway'), 'gateway');
    const operator = container(byComponent(allOn, 'Deployment', 'operator'), 'operator');
    const migrate = container(byComponent(allOn, 'Job', 'migration'), 'migrate');
    for (const c of [gateway, operator, migrate]) {
      for (const name of ['DATABASE_URL', 'SECRET_KEY']) {
        expect(envOf(c, name)?.valueFrom?.secretKeyRef, `${c.name} ${name}`).toEqual({
          name: 'tollgate-connections',
          key: name,
        });
      }
      // redis.existingSecret wins over the shared Secret.
      expect(envOf(c, 'REDIS_URL')?.valueFrom?.secretKeyRef, `${c.name} REDIS_URL`).toEqual({
        name: 'tollgate-redis',
        key: 'url',
      });
    }
    // A plain value replaces a key left out of the existing Secret.
    const mixed = render([
      '-f',
      allOnValues,
      '--set',
      'redis.existingSecret.name=',
      '--set',
      'existingSecret.keys.redisUrl=',
      '--set',
      'redis.url=rediss://cache:6380',
    ]);
    const mixedGateway = container(byComponent(mixed, 'Deployment', 'gateway'), 'gateway');
    expect(envOf(mixedGateway, 'REDIS_URL').valueFrom.secretKeyRef).toEqual({
      name: `${RELEASE}-tollgate`,
      key: 'REDIS_URL',
    });
    expect(envOf(mixedGateway, 'DATABASE_URL').valueFrom.secretKeyRef.name).toBe('tollgate-connections');
    expect(Object.keys(one(mixed, 'Secret', `${RELEASE}-tollgate`).data)).toEqual(['REDIS_URL']);
  });

  it('passes every gateway setting of the values as the environment variable the README names', () => {
    const values = parseYaml(readFileSync(allOnValues, 'utf8'));
    const gateway = container(byComponent(allOn, 'Deployment', 'gateway'), 'gateway');
    for (const [name, value] of Object.entries(values.gateway.config as Record<string, unknown>)) {
      expect(envOf(gateway, name)?.value, name).toBe(String(value));
    }
    // 1000000 stays an integer (YAML numbers reach templates as floats).
    expect(envOf(gateway, 'GLOBAL_API_RATE_LIMIT').value).toBe('1000000');
    expect(envOf(gateway, 'NODE_OPTIONS').value).toBe('--max-old-space-size=768');
    // TRUST_PROXY: "true" behind the chart's Ingress unless set; unset without it.
    const minimalGateway = container(byComponent(minimal, 'Deployment', 'gateway'), 'gateway');
    expect(envOf(minimalGateway, 'TRUST_PROXY')).toBeUndefined();
    const ingressOn = render(['-f', minimalValues, '--set', 'gateway.ingress.enabled=true']);
    expect(envOf(container(byComponent(ingressOn, 'Deployment', 'gateway'), 'gateway'), 'TRUST_PROXY').value).toBe(
      'true',
    );
  });

  it('wires Service, Ingress, HTTPRoute, HPA and PDB to the gateway pods; only the http port is public', () => {
    const deployment = byComponent(allOn, 'Deployment', 'gateway');
    const podLabels = deployment.spec.template.metadata.labels;
    const service = one(allOn, 'Service', `${RELEASE}-tollgate`);
    expect(selects(service.spec.selector, podLabels)).toBe(true);
    expect(service.spec.ports).toEqual([
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' },
    ]);
    // The metrics port lives on its own Service, which neither the Ingress nor the HTTPRoute names.
    const metrics = one(allOn, 'Service', `${RELEASE}-tollgate-metrics`);
    expect(selects(metrics.spec.selector, podLabels)).toBe(true);
    expect(metrics.spec.ports).toEqual([
      { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP', appProtocol: 'http' },
    ]);
    const ingress = one(allOn, 'Ingress');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.tls[0].secretName).toBe('tollgate-tls');
    const backends = ingress.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.backend.service));
    expect(backends.length).toBeGreaterThan(0);
    for (const backend of backends) expect(backend).toEqual({ name: service.metadata.name, port: { name: 'http' } });

    const route = one(allOn, 'HTTPRoute');
    expect(route.spec.parentRefs).toEqual([{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }]);
    expect(route.spec.hostnames).toEqual(['ai.example.com']);
    expect(route.metadata.annotations['example.com/route']).toBe('public');
    const routeBackends = route.spec.rules.flatMap((r: any) => r.backendRefs);
    expect(routeBackends).toEqual([{ name: service.metadata.name, port: 80 }]);
    // Port 80 of the user Service is its http port.
    expect(service.spec.ports.find((p: any) => p.port === 80).targetPort).toBe('http');
    expect(find(minimal, 'HTTPRoute')).toHaveLength(0);
    // Behind the HTTPRoute alone, client addresses come from X-Forwarded-For too.
    const routeOnly = render([
      '-f',
      minimalValues,
      '--set',
      'gateway.httpRoute.enabled=true',
      '--set-json',
      'gateway.httpRoute.parentRefs=[{"name":"public"}]',
    ]);
    expect(envOf(container(byComponent(routeOnly, 'Deployment', 'gateway'), 'gateway'), 'TRUST_PROXY').value).toBe(
      'true',
    );
    expect(renderError(['-f', minimalValues, '--set', 'gateway.httpRoute.enabled=true'])).toContain('parentRefs');

    const hpa = one(allOn, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(hpa.spec.minReplicas).toBe(3);
    expect(hpa.spec.maxReplicas).toBe(20);
    const cpu = hpa.spec.metrics.find((m: any) => m.resource?.name === 'cpu');
    expect(cpu.resource.target).toEqual({ type: 'Utilization', averageUtilization: 65 });
    // Relays in flight per pod, the gateway's gauge served as a custom metric.
    const inFlight = hpa.spec.metrics.find((m: any) => m.type === 'Pods');
    expect(inFlight.pods).toEqual({
      metric: { name: 'tollgate_relay_in_flight_requests' },
      target: { type: 'AverageValue', averageValue: '25' },
    });
    const metricsSource = readFileSync(path.join(root, 'gateway/src/relay/metrics.ts'), 'utf8');
    expect(metricsSource).toContain(`'${inFlight.pods.metric.name}'`);
    const cpuOnly = render(['-f', minimalValues, '--set', 'gateway.autoscaling.enabled=true']);
    expect(one(cpuOnly, 'HorizontalPodAutoscaler').spec.metrics.map((m: any) => m.type)).toEqual(['Resource']);
    // The HPA owns the replica count.
    expect(deployment.spec.replicas).toBeUndefined();
    expect(byComponent(minimal, 'Deployment', 'gateway').spec.replicas).toBe(2);
    expect(find(minimal, 'HorizontalPodAutoscaler')).toHaveLength(0);
    expect(find(minimal, 'Ingress')).toHaveLength(0);

    const pdb = byComponent(allOn, 'PodDisruptionBudget', 'gateway');
    expect(selects(pdb.spec.selector.matchLabels, podLabels)).toBe(true);
    expect(pdb.spec.minAvailable).toBe(2);
    expect(pdb.spec.maxUnavailable).toBeUndefined();
    expect(byComponent(minimal, 'PodDisruptionBudget', 'gateway').spec.maxUnavailable).toBe(1);
  });

  it('runs the operator with its probes, leader-election identity and service account', async () => {
    const loadOperatorConfig = await operatorConfigLoader();
    for (const objects of [minimal, allOn]) {
      const deployment = byComponent(objects, 'Deployment', 'operator');
      const spec = deployment.spec.template.spec;
      const operator = container(deployment, 'operator');
      expect(operator.command).toEqual(['node', 'operator/src/main.ts']);
      expect(operator.ports).toEqual([{ name: 'metrics', containerPort: 8081, protocol: 'TCP' }]);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        expect(operator[probe].httpGet, probe).toEqual({ path: '/healthz', port: 'metrics' });
      }
      expect(envOf(operator, 'POD_NAME').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
      expect(envOf(operator, 'POD_NAMESPACE').valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
      expect(envOf(operator, 'WATCH_NAMESPACES').value).toBe(objects === allOn ? '' : NAMESPACE);
      expect(envOf(operator, 'DATABASE_URL').valueFrom.secretKeyRef).toBeDefined();
      expect(envOf(operator, 'GATEWAY_BASE_URL').value).toMatch(/^https?:\/\//);
      expect(envOf(operator, 'METRICS_PORT').value).toBe('8081');
      expect(envOf(operator, 'LEASE_NAME').value).toBe(`${RELEASE}-tollgate-operator`);
      // What the chart hands the operator is what the operator's config loader accepts.
      if (loadOperatorConfig) expect(() => loadOperatorConfig(envMap(operator))).not.toThrow();
      expectRestricted(spec, deployment.metadata.name);
      const sa = one(objects, 'ServiceAccount', spec.serviceAccountName);
      expect(sa.automountServiceAccountToken ?? true).toBe(true);
      // Gateway and operator talk on the same Redis bus.
      const gateway = container(byComponent(objects, 'Deployment', 'gateway'), 'gateway');
      expect(envOf(operator, 'REDIS_NAMESPACE').value).toBe(envOf(gateway, 'REDIS_NAMESPACE')?.value ?? 'tollgate');
      const metrics = byComponent(objects, 'Service', 'operator');
      expect(selects(metrics.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
      expect(metrics.spec.ports[0].targetPort).toBe('metrics');
    }
    const gatewayURL = container(byComponent(minimal, 'Deployment', 'operator'), 'operator');
    expect(envOf(gatewayURL, 'GATEWAY_BASE_URL').value).toBe(`http://${RELEASE}-tollgate.${NAMESPACE}.svc:80`);
  });

  it('renders nothing of the operator when it is disabled (its RBAC: tests/k8s/operator-rbac.test.ts)', () => {
    // Without the operator, nothing of it is rendered.
    const off = render(['-f', minimalValues, '--set', 'operator.enabled=false']);
    expect(off.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'operator')).toHaveLength(0);
  });

  it('migrates in a pre-install/pre-upgrade hook Job that can read its Secret before the release exists', () => {
    for (const objects of [minimal, allOn]) {
      const job = byComponent(objects, 'Job', 'migration');
      expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      const migrate = container(job, 'migrate');
      expect(migrate.command).toEqual(['node', 'gateway/src/migrate.ts']);
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
      expectRestricted(job.spec.template.spec, job.metadata.name);
      expect(() => loadConfig(envMap(migrate))).not.toThrow();
      for (const env of migrate.env.filter((e: any) => e.valueFrom?.secretKeyRef)) {
        const name = env.valueFrom.secretKeyRef.name;
        const secret = find(objects, 'Secret', name)[0];
        if (!secret) continue; // the existing Secret
        // A Secret of the release proper would not exist yet on pre-install: it must be an earlier hook.
        expect(secret.metadata.annotations?.['helm.sh/hook'], `${name} is a hook`).toBe('pre-install,pre-upgrade');
        expect(Number(secret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
          Number(job.metadata.annotations['helm.sh/hook-weight']),
        );
      }
    }
    for (const entry of ['gateway/src/main.ts', 'gateway/src/migrate.ts']) {
      expect(existsSync(path.join(root, entry)), `${entry} exists`).toBe(true);
    }
    const off = render(['-f', minimalValues, '--set', 'migration.enabled=false']);
    expect(
      find(off, 'Job').filter((j) => j.metadata.labels?.['app.kubernetes.io/component'] === 'migration'),
    ).toHaveLength(0);
    // Without the Job nobody else migrates: the pods do it at start.
    const offGateway = container(byComponent(off, 'Deployment', 'gateway'), 'gateway');
    expect(envOf(offGateway, 'MIGRATE_ON_START').value).toBe('true');
  });

  it("runs the migration Job with the gateway's environment, envFrom and extra volumes", () => {
    // Only what belongs to a serving pod stays with the gateway.
    const servingOnly = ['PORT', 'HOST', 'METRICS_PORT', 'MIGRATE_ON_START'];
    for (const objects of [minimal, allOn, namespaced]) {
      const deployment = byComponent(objects, 'Deployment', 'gateway');
      const job = byComponent(objects, 'Job', 'migration');
      const gateway = container(deployment, 'gateway');
      const migrate = container(job, 'migrate');
      // The chart's own Secret is read through its pre-install hook copy, under the same key.
      const chartSecret = `${RELEASE}-tollgate`;
      const hookSecret = `${RELEASE}-tollgate-migrate`;
      const normalise = (env: any) =>
        env.valueFrom?.secretKeyRef?.name === hookSecret
          ? { ...env, valueFrom: { secretKeyRef: { ...env.valueFrom.secretKeyRef, name: chartSecret } } }
          : env;
      const shared = gateway.env.filter((e: any) => !servingOnly.includes(e.name));
      expect(shared.length).toBeGreaterThan(3);
      expect(migrate.env.map(normalise)).toEqual(shared);
      expect(migrate.envFrom).toEqual(gateway.envFrom);
      expect(migrate.volumeMounts).toEqual(gateway.volumeMounts);
      expect(job.spec.template.spec.volumes.filter((v: any) => v.name !== 'tmp')).toEqual(
        deployment.spec.template.spec.volumes.filter((v: any) => v.name !== 'tmp'),
      );
    }
    // all-on: the CA of a managed Postgres and an OAuth Secret reach both.
    const job = byComponent(allOn, 'Job', 'migration');
    expect(container(job, 'migrate').volumeMounts).toContainEqual({
      name: 'db-ca',
      mountPath: '/etc/tollgate/db-ca',
      readOnly: true,
    });
    expect(job.spec.template.spec.volumes).toContainEqual({ name: 'db-ca', secret: { secretName: 'tollgate-db-ca' } });
    expect(container(job, 'migrate').envFrom).toContainEqual({ secretRef: { name: 'tollgate-oauth' } });
    expect(envOf(container(job, 'migrate'), 'NODE_OPTIONS').value).toBe('--max-old-space-size=768');
    expect(envOf(container(job, 'migrate'), 'LOG_LEVEL').value).toBe('debug');
  });

  it("helm test asks the gateway Service for /readyz and /api/status with the image's own node", async () => {
    const pod = one(allOn, 'Pod');
    expect(pod.metadata.annotations['helm.sh/hook']).toBe('test');
    expect(pod.spec.restartPolicy).toBe('Never');
    expectRestricted(pod.spec, pod.metadata.name);
    const [check] = pod.spec.containers;
    expect(check.image).toBe(container(byComponent(allOn, 'Deployment', 'gateway'), 'gateway').image);
    // Through the user Service's own port.
    const service = one(allOn, 'Service', `${RELEASE}-tollgate`);
    expect(envOf(check, 'TOLLGATE_URL').value).toBe(
      `http://${service.metadata.name}.${NAMESPACE}.svc:${service.spec.ports[0].port}`,
    );
    const [node, ...args] = check.command as string[];
    expect(node).toBe('node');
    const run = (url: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, args, { env: { TOLLGATE_URL: url }, timeout: 30_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    // The very command, against a real gateway.
    const database = await createTestDatabase();
    const gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
    try {
      const passed = await run(gateway.url);
      expect(passed.code, passed.stderr).toBe(0);
      expect(passed.stdout).toContain('GET /readyz: ok');
      expect(passed.stdout).toContain('GET /api/status: ok');
    } finally {
      await gateway.stop();
      await database.drop();
    }
    const failed = await run(`http://127.0.0.1:${await closedPort()}`);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('tollgate helm test failed');
    expect(find(render(['-f', minimalValues, '--set', 'tests.enabled=false']), 'Pod')).toHaveLength(0);
  });

  it('pulls every image by digest or tag, behind global.imageRegistry', () => {
    const images = (objects: K8sObject[]): string[] =>
      objects.flatMap((o) => {
        const spec = o.kind === 'Pod' ? o.spec : o.spec?.template?.spec;
        return spec ? [...(spec.initContainers ?? []), ...spec.containers].map((c: any) => c.image) : [];
      });
    const allOnImages = images(allOn);
    // Gateway, operator, migration Job and helm test pod.
    expect(allOnImages.length).toBeGreaterThanOrEqual(4);
    for (const image of allOnImages) expect(image).toMatch(/^mirror\.example\.com\/tollgate\//);
    const digest = 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
    // The digest wins over the tag for the gateway (and so the Job and the test pod); the operator keeps its tag.
    expect(container(byComponent(allOn, 'Deployment', 'gateway'), 'gateway').image).toBe(
      `mirror.example.com/tollgate/gateway@${digest}`,
    );
    expect(container(byComponent(allOn, 'Job', 'migration'), 'migrate').image).toBe(
      `mirror.example.com/tollgate/gateway@${digest}`,
    );
    expect(container(byComponent(allOn, 'Deployment', 'operator'), 'operator').image).toBe(
      'mirror.example.com/tollgate/operator:0.1.0',
    );
    for (const image of images(minimal)) expect(image).toMatch(/^tollgate\/(gateway|operator):0\.1\.0$/);
    const operatorDigest = render(['-f', minimalValues, '--set', `operator.image.digest=${digest}`]);
    expect(container(byComponent(operatorDigest, 'Deployment', 'operator'), 'operator').image).toBe(
      `tollgate/operator@${digest}`,
    );
  });

  it('keeps the metrics ports to the monitoring peers with NetworkPolicies, egress as configured', () => {
    const policy = one(allOn, 'NetworkPolicy', `${RELEASE}-tollgate`);
    const gatewayPods = byComponent(allOn, 'Deployment', 'gateway').spec.template.metadata.labels;
    expect(selects(policy.spec.podSelector.matchLabels, gatewayPods)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const rule = (port: string) => policy.spec.ingress.find((r: any) => r.ports.some((p: any) => p.port === port));
    const values = parseYaml(readFileSync(allOnValues, 'utf8'));
    const testPod = one(allOn, 'Pod');
    // http: the configured peers plus the helm test pod.
    expect(rule('http').from.slice(0, -1)).toEqual(values.networkPolicy.httpFrom);
    expect(selects(rule('http').from.at(-1).podSelector.matchLabels, testPod.metadata.labels)).toBe(true);
    expect(rule('metrics').from).toEqual(values.networkPolicy.metricsFrom);
    // Every rule names one port: no rule opens both.
    for (const r of policy.spec.ingress) expect(r.ports).toHaveLength(1);
    // Egress: DNS first, then the configured rules (Postgres, Redis, upstreams on 443).
    expect(policy.spec.egress[0].ports.map((p: any) => `${p.protocol}/${p.port}`)).toEqual(['UDP/53', 'TCP/53']);
    expect(policy.spec.egress.slice(1)).toEqual(values.networkPolicy.egress.rules);
    const operatorPolicy = one(allOn, 'NetworkPolicy', `${RELEASE}-tollgate-operator`);
    expect(operatorPolicy.spec.policyTypes).toEqual(['Ingress']);
    expect(operatorPolicy.spec.ingress).toEqual([
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: values.networkPolicy.metricsFrom },
    ]);
    // Default peers: http from anywhere, egress open.
    const open = render(['-f', minimalValues, '--set', 'networkPolicy.enabled=true']);
    validateAll(open);
    const openPolicy = one(open, 'NetworkPolicy', `${RELEASE}-tollgate`);
    expect(openPolicy.spec.policyTypes).toEqual(['Ingress']);
    expect(openPolicy.spec.ingress[0]).toEqual({ ports: [{ port: 'http', protocol: 'TCP' }] });
    expect(openPolicy.spec.ingress[1].from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    expect(find(minimal, 'NetworkPolicy')).toHaveLength(0);
  });

  it('gives the operator a disruption budget and the configured spread', () => {
    const pods = byComponent(allOn, 'Deployment', 'operator');
    const pdb = byComponent(allOn, 'PodDisruptionBudget', 'operator');
    expect(selects(pdb.spec.selector.matchLabels, pods.spec.template.metadata.labels)).toBe(true);
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.maxUnavailable).toBeUndefined();
    expect(pods.spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'operator' } },
      },
    ]);
    expect(byComponent(minimal, 'PodDisruptionBudget', 'operator').spec.maxUnavailable).toBe(1);
    expect(byComponent(minimal, 'Deployment', 'operator').spec.template.spec.topologySpreadConstraints).toBeUndefined();
    const off = render(['-f', minimalValues, '--set', 'operator.podDisruptionBudget.enabled=false']);
    expect(find(off, 'PodDisruptionBudget').map((p) => p.metadata.labels['app.kubernetes.io/component'])).toEqual([
      'gateway',
    ]);
  });

  it('monitors the gateway and the operator through their metrics Services only', () => {
    const monitors = find(allOn, 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.labels['app.kubernetes.io/component']).sort()).toEqual([
      'gateway',
      'operator',
    ]);
    const expected: Record<string, string> = {
      gateway: `${RELEASE}-tollgate-metrics`,
      operator: `${RELEASE}-tollgate-operator`,
    };
    for (const monitor of monitors) {
      expect(monitor.metadata.labels.release).toBe('kube-prometheus-stack');
      const selected = find(allOn, 'Service').filter((s) =>
        selects(monitor.spec.selector.matchLabels, s.metadata.labels),
      );
      const component = monitor.metadata.labels['app.kubernetes.io/component'];
      expect(selected.map((s) => s.metadata.name)).toEqual([expected[component]]);
      expect(monitor.spec.endpoints.map((e: any) => e.port)).toEqual(['metrics']);
      expect(selected[0]!.spec.ports.map((p: any) => p.name)).toEqual(['metrics']);
    }
    expect(find(minimal, 'ServiceMonitor')).toHaveLength(0);
  });

  it('turns rule files into PrometheusRules and dashboards into Grafana ConfigMaps', () => {
    // A copy of the chart with one rule file of each format and one dashboard, whatever deploy/ holds today.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-chart-'));
    try {
      const copy = path.join(dir, 'tollgate');
      cpSync(chartDir, copy, { recursive: true });
      writeFileSync(
        path.join(copy, 'files/prometheus/fixture-rules.yaml'),
        'groups:\n  - name: fixture.rules\n    rules:\n      - alert: FixtureDown\n        expr: up == 0\n        for: 5m\n        annotations:\n          summary: "{{ $labels.pod }} is down"\n',
      );
      writeFileSync(
        path.join(copy, 'files/prometheus/fixture-manifest.yml'),
        'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: x\nspec:\n  groups:\n    - name: fixture.records\n      rules:\n        - record: job:up:sum\n          expr: sum by (job) (up)\n',
      );
      const dashboard = { title: 'Fixture', panels: [{ type: 'timeseries', targets: [{ expr: 'sum(rate(x[5m]))' }] }] };
      writeFileSync(path.join(copy, 'files/dashboards/fixture-overview.json'), JSON.stringify(dashboard, null, 2));
      const objects = render(['-f', allOnValues], copy);
      validateAll(objects);
      const rules = find(objects, 'PrometheusRule').filter((r) => r.metadata.name.includes('fixture'));
      expect(rules.map((r) => r.spec.groups[0].name).sort()).toEqual(['fixture.records', 'fixture.rules']);
      expect(rules.map((r) => r.metadata.annotations['tollgate.dev/source']).sort()).toEqual([
        'deploy/prometheus/fixture-manifest.yml',
        'deploy/prometheus/fixture-rules.yaml',
      ]);
      const alert = rules.find((r) => r.spec.groups[0].name === 'fixture.rules')!.spec.groups[0].rules[0];
      // Prometheus templates pass through untouched.
      expect(alert.annotations.summary).toBe('{{ $labels.pod }} is down');
      expect(rules[0]!.metadata.labels.release).toBe('kube-prometheus-stack');
      const configMap = one(objects, 'ConfigMap', `${RELEASE}-tollgate-dashboard-fixture-overview`);
      expect(configMap.metadata.namespace).toBe('monitoring');
      expect(configMap.metadata.labels.grafana_dashboard).toBe('1');
      expect(configMap.metadata.annotations.grafana_folder).toBe('Tollgate');
      expect(JSON.parse(configMap.data['fixture-overview.json'])).toEqual(dashboard);
      // Switched off, neither is rendered.
      const off = render(['-f', minimalValues], copy);
      expect(find(off, 'PrometheusRule')).toHaveLength(0);
      expect(find(off, 'ConfigMap')).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The real chart: one PrometheusRule per shipped rule file, one ConfigMap per shipped dashboard.
    const shipped = (dir: string, pattern: RegExp): string[] =>
      existsSync(path.join(chartDir, dir)) ? readdirSync(path.join(chartDir, dir)).filter((f) => pattern.test(f)) : [];
    const ruleFiles = shipped('files/prometheus', /\.ya?ml$/);
    expect(find(allOn, 'PrometheusRule')).toHaveLength(ruleFiles.length);
    for (const file of ruleFiles) {
      const source = parseYaml(readFileSync(path.join(chartDir, 'files/prometheus', file), 'utf8'));
      const rule = find(allOn, 'PrometheusRule').find(
        (r) => r.metadata.annotations['tollgate.dev/source'] === `deploy/prometheus/${file}`,
      );
      expect(rule?.spec.groups, file).toEqual(source.groups ?? source.spec.groups);
    }
    // Without an operator its rules (absent() among them) would fire for ever: they are left out.
    const noOperator = render(['-f', allOnValues, '--set', 'operator.enabled=false']);
    expect(
      find(noOperator, 'PrometheusRule')
        .map((r) => r.metadata.annotations['tollgate.dev/source'])
        .sort(),
    ).toEqual(
      ruleFiles
        .filter((f) => !f.startsWith('tollgate-operator-'))
        .map((f) => `deploy/prometheus/${f}`)
        .sort(),
    );
    expect(find(allOn, 'ConfigMap')).toHaveLength(shipped('files/dashboards', /\.json$/).length);
    for (const configMap of find(allOn, 'ConfigMap')) {
      for (const json of Object.values(configMap.data as Record<string, string>))
        expect(() => JSON.parse(json)).not.toThrow();
    }
  });

  it('ships the CRDs as valid apiextensions objects whose schemas compile', () => {
    const crds = find(allOn, 'CustomResourceDefinition');
    const files = readdirSync(path.join(root, 'crds')).filter((f) => f.endsWith('.yaml'));
    expect(crds.length).toBeGreaterThanOrEqual(files.length);
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const crd of crds) {
      expect(crd.spec.group).toBe('tollgate.dev');
      for (const version of crd.spec.versions) {
        expect(() => ajv.compile(version.schema.openAPIV3Schema), `${crd.metadata.name} ${version.name}`).not.toThrow();
      }
    }
  });

  it('renders the CRDs as templates, so helm upgrade upgrades them, kept on uninstall', () => {
    // Nothing in crds/: Helm would install that once and never upgrade it.
    expect(existsSync(path.join(chartDir, 'crds'))).toBe(false);
    const sources = readdirSync(path.join(root, 'crds'))
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => parseAllDocuments(readFileSync(path.join(root, 'crds', f), 'utf8')).map((d) => d.toJS()))
      .filter((doc) => doc?.kind === 'CustomResourceDefinition');
    for (const objects of [minimal, allOn]) {
      const crds = find(objects, 'CustomResourceDefinition');
      expect(crds.map((c) => c.metadata.name).sort()).toEqual(sources.map((c) => c.metadata.name).sort());
      for (const crd of crds) {
        expect(crd.metadata.annotations['helm.sh/resource-policy'], crd.metadata.name).toBe('keep');
        expect(crd.metadata.labels['app.kubernetes.io/instance']).toBe(RELEASE);
        // Exactly the repository's CRD apart from the release's labels and the keep annotation.
        const source = sources.find((c) => c.metadata.name === crd.metadata.name);
        const { labels, annotations, ...meta } = crd.metadata;
        const { labels: sourceLabels, annotations: sourceAnnotations, ...sourceMeta } = source.metadata;
        expect({ ...crd, metadata: meta }).toEqual({ ...source, metadata: sourceMeta });
        expect(labels).toEqual(expect.objectContaining(sourceLabels ?? {}));
      }
    }
    expect(find(render(['-f', minimalValues, '--set', 'crds.install=false']), 'CustomResourceDefinition')).toHaveLength(
      0,
    );
  });

  it('refuses an install without a database, and several pods without Redis', () => {
    expect(renderError([])).toContain('DATABASE_URL is required');
    expect(renderError(['--set', 'existingSecret.name=conn', '--set', 'existingSecret.keys.databaseUrl='])).toContain(
      'DATABASE_URL is required',
    );
    const db = ['--set', 'database.url=postgres://u:p@db:5432/t'];
    expect(renderError(db)).toContain('REDIS_URL is required');
    expect(
      renderError([...db, '--set', 'gateway.replicaCount=1', '--set', 'gateway.autoscaling.enabled=true']),
    ).toContain('REDIS_URL is required');
    // One pod without Redis is allowed (and the existing Secret alone is enough).
    expect(() => render([...db, '--set', 'gateway.replicaCount=1'])).not.toThrow();
    expect(() => render(['--set', 'existingSecret.name=conn'])).not.toThrow();
    expect(renderError(['-f', minimalValues, '--set', 'gateway.terminationGracePeriodSeconds=20'])).toContain(
      'terminationGracePeriodSeconds',
    );
    expect(renderError(['-f', allOnValues, '--set', 'gateway.autoscaling.minReplicas=30'])).toContain('minReplicas');
  });

  it('refuses values that break values.schema.json', () => {
    const bad: [string, string][] = [
      ['gateway.config.LOG_LEVEL=verbose', 'LOG_LEVEL'],
      ['gateway.config.DATABASE_POOL_MAX=5000', 'DATABASE_POOL_MAX'],
      ['gateway.config.UNKNOWN_SETTING=1', 'UNKNOWN_SETTING'],
      ['gateway.replicaCount=0', 'replicaCount'],
      ['gateway.replicas=3', 'replicas'],
      ['secretKey=too-short', 'secretKey'],
      ['database.url=mysql://db/t', 'url'],
      ['gateway.image.pullPolicy=Sometimes', 'pullPolicy'],
      ['gateway.autoscaling.targetCPUUtilizationPercentage=150', 'targetCPUUtilizationPercentage'],
      ['operator.watchNamespaces={Not_A_Namespace}', 'watchNamespaces'],
      ['gateway.image.digest=sha256:abc', 'digest'],
      ['gateway.metricsPort=80', 'metricsPort'],
      ['global.imageRegistry=https://registry.example.com', 'imageRegistry'],
      ['gateway.autoscaling.inFlightRequests.targetAverageValue=0', 'targetAverageValue'],
      ['networkPolicy.egress.enabled=yes', 'enabled'],
      ['podSecurityContext.runAsUser=0', 'runAsUser'],
      ['database.existingSecret.key=', 'key'],
      ['secretKey=a-plain-string-key', 'secretKey'],
      ['gateway.httpRoute.hostnames[0]=Not A Host', 'hostnames'],
      ['crds.install=sometimes', 'install'],
    ];
    for (const [set, name] of bad) {
      const error = renderError(['-f', minimalValues, '--set', set]);
      expect(error, set).toMatch(/schema/i);
      expect(error, set).toContain(name);
    }
  });
});

// --- values.schema.json against the README and the gateway's config loader (no helm needed) -----------------

describe('values.schema.json', () => {
  const schema = JSON.parse(readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8'));
  const configSchema = schema.properties.gateway.properties.config;
  const settings = configSchema.properties as Record<string, any>;

  it('is draft-07, accepts values.yaml and the ci values, and types every value with bounds', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const defaults = parseYaml(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'));
    for (const file of ['values.yaml', ...CI_VALUES.map((f) => `ci/${f}`)]) {
      const ok = validate(merge(defaults, parseYaml(readFileSync(path.join(chartDir, file), 'utf8'))));
      expect(validate.errors ?? [], file).toEqual([]);
      expect(ok, file).toBe(true);
    }
    const problems: string[] = [];
    const walk = (node: any, at: string): void => {
      if (node.anyOf) {
        for (const [i, option] of node.anyOf.entries()) walk({ type: node.type, ...option }, `${at}|${i}`);
        return;
      }
      if (!node.type) {
        problems.push(`${at}: no type`);
        return;
      }
      if (node.type === 'integer' || node.type === 'number') {
        if (node.minimum === undefined || node.maximum === undefined) problems.push(`${at}: no bounds`);
      }
      if (node.type === 'string' && node.enum === undefined && node.maxLength === undefined && !node.pattern) {
        problems.push(`${at}: unbounded string`);
      }
      if (node.type === 'object' && node.properties) {
        // global is shared with parent charts: their keys must pass.
        if (node.additionalProperties !== false && at !== 'values.global') problems.push(`${at}: open object`);
        for (const [key, child] of Object.entries(node.properties)) walk(child, `${at}.${key}`);
      }
      if (node.type === 'object' && typeof node.additionalProperties === 'object') {
        walk(node.additionalProperties, `${at}.*`);
      }
      if (node.type === 'array') {
        if (node.maxItems === undefined) problems.push(`${at}: no maxItems`);
        if (node.items) walk(node.items, `${at}[]`);
      }
    };
    walk(schema, 'values');
    expect(problems).toEqual([]);
  });

  it("covers every variable of the README's configuration table", () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Running against'));
    const names = new Set<string>();
    for (const line of table.split('\n').filter((l) => l.startsWith('| `'))) {
      const cell = line.split('|')[1] ?? '';
      const first = /`([A-Z0-9_]+)`/.exec(cell)?.[1];
      for (const [, name] of cell.matchAll(/`([A-Z0-9_]+|…[A-Z0-9_]+)`/g)) {
        names.add(name!.startsWith('…') ? `${first}${name!.slice(1)}` : name!);
      }
    }
    expect(names.size).toBeGreaterThan(30);
    // Set by the chart itself (METRICS_HOST follows HOST), or read from the Secret; DATA_DIR belongs to the
    // embedded database only.
    const byChart = [
      'PORT',
      'HOST',
      'METRICS_PORT',
      'METRICS_HOST',
      'MIGRATE_ON_START',
      'NODE_NAME',
      'DATABASE_URL',
      'REDIS_URL',
      'SECRET_KEY',
      'DATA_DIR',
    ];
    for (const name of names) {
      if (byChart.includes(name)) continue;
      expect(settings[name], `gateway.config.${name} in values.schema.json`).toBeDefined();
    }
    for (const name of Object.keys(settings)) expect(names.has(name), `${name} is in the README`).toBe(true);
  });

  it("has the gateway's own bounds for every setting", () => {
    const refused = (env: Record<string, string>): boolean => {
      try {
        loadConfig(env);
        return false;
      } catch (error) {
        if (error instanceof ConfigError) return true;
        throw error;
      }
    };
    for (const [name, rule] of Object.entries(settings)) {
      if (rule.type === 'integer') {
        expect(refused({ [name]: String(rule.minimum) }), `${name}=${rule.minimum}`).toBe(false);
        expect(refused({ [name]: String(rule.maximum) }), `${name}=${rule.maximum}`).toBe(false);
        expect(refused({ [name]: String(rule.maximum + 1) }), `${name}=${rule.maximum + 1}`).toBe(true);
        if (rule.minimum > 0)
          expect(refused({ [name]: String(rule.minimum - 1) }), `${name}=${rule.minimum - 1}`).toBe(true);
      } else if (rule.type === 'boolean') {
        expect(refused({ [name]: 'true' }) || refused({ [name]: 'false' }), name).toBe(false);
        expect(refused({ [name]: 'maybe' }), `${name}=maybe`).toBe(true);
      } else if (rule.enum) {
        for (const value of rule.enum) expect(refused({ [name]: value }), `${name}=${value}`).toBe(false);
        expect(refused({ [name]: 'verbose' }), `${name}=verbose`).toBe(true);
      } else if (name.endsWith('_URL')) {
        expect(refused({ [name]: 'https://example.com/x' }), name).toBe(false);
        expect(refused({ [name]: 'ftp://example.com/x' }), `${name}=ftp://`).toBe(true);
        expect(new RegExp(rule.pattern).test('ftp://example.com/x'), `${name} pattern`).toBe(false);
      }
    }
  });
});

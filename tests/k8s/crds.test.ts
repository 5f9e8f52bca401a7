import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { findOptionDefinition, validateOption } from '../../gateway/src/domain/options/index.ts';
import { GENERATED_FILE, generateTypes } from '../../operator/scripts/generate-types.ts';
import {
  type AccessToken,
  API_VERSION,
  type Channel,
  GROUP,
  KINDS,
  type ModelPrice,
  PLURALS,
  SHORT_NAMES,
  VERSION,
} from '../../operator/src/types/generated.ts';
import {
  applyDefaults,
  CRD_DIR,
  celErrors,
  celRuleProblems,
  celRules,
  defaultCustomResource,
  type JsonSchema,
  type LoadedCrd,
  loadCrds,
  printerColumnProblems,
  structuralProblems,
  validateCustomResource,
} from '../support/crd-schemas.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLES = join(ROOT, 'deploy/examples');
const crds = loadCrds();
const crd = (kind: string): LoadedCrd => {
  const found = crds.find((candidate) => candidate.kind === kind);
  if (!found) throw new Error(`no CRD for ${kind}`);
  return found;
};
const spec = (kind: string) => crd(kind).schema.properties!.spec!;
const status = (kind: string) => crd(kind).schema.properties!.status!;
const resource = (kind: string, specValue: unknown, name = 'sample') => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind,
  metadata: { name, namespace: 'ai-apps' },
  spec: specValue,
});

/** Kinds, short names and spec fields as crds/README.md declares them. */
function readmeDesign(): Map<string, { shortName: string; fields: string[] }> {
  const design = new Map<string, { shortName: string; fields: string[] }>();
  let current: { shortName: string; fields: string[] } | undefined;
  for (const line of readFileSync(join(CRD_DIR, 'README.md'), 'utf8').split('\n')) {
    const heading = /^## (\w+) \(`(\w+)`\)/.exec(line);
    if (heading) {
      current = { shortName: heading[2]!, fields: [] };
      design.set(heading[1]!, current);
    } else if (line.startsWith('## ')) {
      current = undefined;
    }
    const row = /^\| `(\w+)` \|/.exec(line);
    if (current && row) current.fields.push(row[1]!);
  }
  return design;
}

/** Every YAML document under deploy/examples, with its file. */
function exampleDocuments(): { file: string; doc: Record<string, any> }[] {
  const documents: { file: string; doc: Record<string, any> }[] = [];
  for (const file of readdirSync(EXAMPLES).filter((name) => name.endsWith('.yaml'))) {
    for (const document of parseAllDocuments(readFileSync(join(EXAMPLES, file), 'utf8'))) {
      expect(document.errors, file).toEqual([]);
      const doc = document.toJS();
      if (doc) documents.push({ file, doc });
    }
  }
  return documents;
}

describe('CRD files', () => {
  it('are one apiextensions.k8s.io/v1 CRD per kind of crds/README.md, namespaced, v1alpha1 with status', () => {
    const design = readmeDesign();
    expect(crds.map((c) => c.kind).sort()).toEqual([...design.keys()].sort());
    for (const c of crds) {
      const { definition } = c;
      expect(definition.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(definition.metadata.name).toBe(`${c.plural}.tollgate.dev`);
      expect(c.group).toBe('tollgate.dev');
      expect(definition.spec.scope).toBe('Namespaced');
      expect(definition.spec.versions).toHaveLength(1);
      expect(definition.spec.versions[0]).toMatchObject({ name: 'v1alpha1', served: true, storage: true });
      expect(definition.spec.versions[0]!.subresources).toEqual({ status: {} });
      expect(definition.spec.names.shortNames).toEqual([design.get(c.kind)!.shortName]);
      expect(definition.spec.names.categories).toEqual(['tollgate']);
      expect(definition.spec.names.listKind).toBe(`${c.kind}List`);
      expect(c.schema.required).toContain('spec');
    }
  });

  it('declare exactly the spec fields of crds/README.md', () => {
    for (const [kind, { fields }] of readmeDesign()) {
      expect(Object.keys(spec(kind).properties!).sort(), kind).toEqual([...fields].sort());
    }
  });

  it('have structural schemas with every string, list and map bounded', () => {
    for (const c of crds) expect(structuralProblems(c.schema), c.kind).toEqual([]);
  });

  it('the structural check catches unbounded and untyped schemas', () => {
    const bad: JsonSchema = {
      type: 'object',
      properties: {
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            list: { type: 'array', items: { type: 'string', maxLength: 5 } },
            map: { type: 'object', additionalProperties: { type: 'string', maxLength: 5 } },
            loose: { type: 'object' },
            untyped: {},
            both: {
              type: 'object',
              properties: { a: { type: 'boolean' } },
              additionalProperties: { type: 'boolean' },
              maxProperties: 1,
            },
            defaulted: { type: 'integer', minimum: 1, default: 0 },
          },
          required: ['missing'],
        },
      },
    };
    expect(structuralProblems(bad)).toEqual([
      'spec: required field missing is not a property',
      'spec.name: string without maxLength',
      'spec.list: array without maxItems',
      'spec.map: map without maxProperties',
      'spec.loose: object without properties, additionalProperties or preserve-unknown-fields',
      'spec.untyped: no type',
      'spec.both: both properties and additionalProperties',
      'spec.defaulted: default does not validate: <root>: must be >= 1',
    ]);
  });

  it('keep status with observedGeneration and conditions (a list-type map keyed by type) plus the README fields', () => {
    const extra: Record<string, string[]> = {
      Channel: [
        'channelId',
        'modelCount',
        'state',
        'stateReason',
        'stateSince',
        'lastTest',
        'usedQuota',
        'balance',
        'balanceUpdated',
      ],
      ModelPrice: ['mode'],
      Group: [],
      GatewaySettings: ['applied', 'rejected'],
      AccessToken: ['tokenId', 'secretName'],
    };
    for (const c of crds) {
      const properties = status(c.kind).properties!;
      expect(Object.keys(properties).sort(), c.kind).toEqual(
        ['observedGeneration', 'conditions', ...extra[c.kind]!].sort(),
      );
      const conditions = properties.conditions!;
      expect(conditions['x-kubernetes-list-type']).toBe('map');
      expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
      expect(conditions.items!.required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
      expect(conditions.items!.properties!.status!.enum).toEqual(['True', 'False', 'Unknown']);
    }
    expect(status('Channel').properties!.state!.enum).toEqual(['enabled', 'disabled', 'autoDisabled']);
    expect(status('Channel').properties!.lastTest!.properties).toHaveProperty('latencyMs');
    expect(status('GatewaySettings').properties!.rejected!.items!.required).toEqual(['key', 'reason']);
  });

  it('apply the defaults of crds/README.md', () => {
    const channel = defaultCustomResource(
      resource('Channel', { type: 1, keySecretRef: { name: 'k' }, models: ['gpt-4o'] }),
    ) as Channel;
    expect(channel.spec).toEqual({
      type: 1,
      keySecretRef: { name: 'k', key: 'apiKey' },
      models: ['gpt-4o'],
      multiKeyMode: 'random',
      groups: ['default'],
      priority: 0,
      weight: 0,
      autoBan: true,
      enabled: true,
    });
    expect(applyDefaults(spec('Group'), { ratio: 1 })).toEqual({ ratio: 1, selectable: false });
    expect(applyDefaults(spec('AccessToken'), { user: 'root' })).toEqual({ user: 'root', unlimitedQuota: true });
    // A value given is kept, and defaulting never touches its input.
    const input = { type: 1, keySecretRef: { name: 'k', key: 'token' }, models: ['m'], groups: ['vip'] };
    expect(applyDefaults(spec('Channel'), input)).toMatchObject({ keySecretRef: { key: 'token' }, groups: ['vip'] });
    expect(input).not.toHaveProperty('enabled');
  });

  it('have short names unique among themselves and apart from common built-in ones', () => {
    const builtIn = ['po', 'svc', 'deploy', 'cm', 'ns', 'no', 'pv', 'pvc', 'sa', 'ds', 'rs', 'sts', 'ing', 'ep'];
    const all = crds.flatMap((c) => c.definition.spec.names.shortNames ?? []);
    expect(new Set(all).size).toBe(all.length);
    for (const name of all) expect(builtIn).not.toContain(name);
    const plurals = crds.map((c) => c.plural);
    expect(new Set(plurals).size).toBe(plurals.length);
  });

  it('have printer columns that name existing fields, with Ready from the conditions and Age', () => {
    for (const c of crds) {
      expect(printerColumnProblems(c), c.kind).toEqual([]);
      const ready = c.printerColumns.find((column) => column.name === 'Ready');
      expect(ready?.jsonPath, c.kind).toBe('.status.conditions[?(@.type=="Ready")].status');
      expect(c.printerColumns.at(-1)).toEqual({ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' });
    }
    const shown = (kind: string) =>
      crd(kind)
        .printerColumns.filter((column) => !column.priority)
        .map((column) => column.name);
    expect(shown('Channel')).toEqual(['Type', 'Ready', 'Models', 'Priority', 'Weight', 'State', 'Age']);
    expect(shown('ModelPrice')).toEqual(['Model', 'Mode', 'Ready', 'Age']);
    const broken = { ...crd('Channel'), printerColumns: [{ name: 'X', type: 'integer', jsonPath: '.spec.nope' }] };
    expect(printerColumnProblems(broken)).toEqual(['Channel column X: .spec.nope: no field nope']);
  });

  it('have CEL rules that parse and type-check', () => {
    for (const c of crds) expect(celRuleProblems(c.schema), c.kind).toEqual([]);
    const rules = crds.flatMap((c) => celRules(c.schema).map(({ path }) => `${c.kind} ${path}`));
    expect(rules.sort()).toEqual(
      [
        'AccessToken <root>',
        'AccessToken spec',
        'AccessToken spec',
        'Channel spec',
        'Channel spec.baseURL',
        'Channel spec.statusCodeMapping',
        'GatewaySettings spec.settings',
        'Group spec.rateLimits',
        'Group spec.userGroupRatios',
        'ModelPrice spec',
        'ModelPrice spec.perToken',
      ].sort(),
    );
  });
});

describe('generated operator types', () => {
  it('match the CRDs (run node operator/scripts/generate-types.ts after changing a CRD)', () => {
    const committed = readFileSync(GENERATED_FILE, 'utf8');
    expect(committed === generateTypes(), 'run node operator/scripts/generate-types.ts').toBe(true);
  });

  it('export the group, version, plurals and short names of the CRDs', () => {
    expect(GROUP).toBe('tollgate.dev');
    expect(VERSION).toBe('v1alpha1');
    expect(API_VERSION).toBe('tollgate.dev/v1alpha1');
    expect([...KINDS]).toEqual(crds.map((c) => c.kind));
    for (const c of crds) {
      expect(PLURALS[c.kind as keyof typeof PLURALS]).toBe(c.plural);
      expect(SHORT_NAMES[c.kind as keyof typeof SHORT_NAMES]).toEqual(c.definition.spec.names.shortNames);
    }
  });

  it('describe objects the schema accepts', () => {
    const channel: Channel = {
      apiVersion: API_VERSION,
      kind: 'Channel',
      metadata: { name: 'openai', namespace: 'ai-apps' },
      spec: { type: 1, keySecretRef: { name: 'openai-key' }, models: ['gpt-4o'], multiKeyMode: 'polling' },
      status: {
        observedGeneration: 1,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Reconciled',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
        channelId: 7,
        modelCount: 1,
        state: 'autoDisabled',
        lastTest: { time: '2026-01-01T00:00:00Z', latencyMs: 420 },
      },
    };
    const price: ModelPrice = {
      apiVersion: API_VERSION,
      kind: 'ModelPrice',
      metadata: { name: 'm' },
      spec: { model: 'm', perCall: { price: 0.1 } },
    };
    const token: AccessToken = {
      apiVersion: API_VERSION,
      kind: 'AccessToken',
      metadata: { name: 't' },
      spec: { user: 'root' },
    };
    for (const object of [channel, price, token]) expect(validateCustomResource(object)).toEqual([]);
  });
});

describe('CEL rules', () => {
  const errorsOf = (kind: string, specValue: unknown, name?: string) =>
    validateCustomResource(resource(kind, specValue, name));

  it('ModelPrice: exactly one of perToken, perCall and tiered', () => {
    const rule = 'spec: Invalid value: exactly one of perToken, perCall and tiered must be set';
    const both = errorsOf('ModelPrice', { model: 'm', perToken: { input: 1 }, perCall: { price: 1 } });
    expect(both).toEqual([rule]);
    expect(errorsOf('ModelPrice', { model: 'm' })).toEqual([rule]);
    expect(errorsOf('ModelPrice', { model: 'm', perCall: { price: 1 }, tiered: { expression: 'p' } })).toEqual([rule]);
    expect(errorsOf('ModelPrice', { model: 'm', perToken: { input: 1, output: 4 } })).toEqual([]);
    expect(errorsOf('ModelPrice', { model: 'm', perCall: { price: 0 } })).toEqual([]);
    expect(errorsOf('ModelPrice', { model: 'm', tiered: { expression: 'tier("base", p * 2 + c * 8)' } })).toEqual([]);
  });

  it('ModelPrice: output and cache prices need a non-zero input price', () => {
    expect(errorsOf('ModelPrice', { model: 'm', perToken: { input: 0, output: 2 } })).toEqual([
      'spec.perToken: Invalid value: output, cacheRead and cacheWrite must be 0 when input is 0 (they are stored as ratios of input)',
    ]);
    expect(errorsOf('ModelPrice', { model: 'm', perToken: { input: 0, output: 0 } })).toEqual([]);
  });

  it('Channel: baseURL must be http(s)', () => {
    const channel = (baseURL: string) =>
      errorsOf('Channel', { type: 1, baseURL, keySecretRef: { name: 'k' }, models: ['m'] });
    expect(channel('ftp://files.example.com')).toEqual([
      'spec.baseURL: Invalid value: baseURL must start with http:// or https:// followed by a host',
    ]);
    expect(channel('https://')).toHaveLength(1);
    expect(channel('https://api.openai.com')).toEqual([]);
    expect(channel('http://vllm.ai-apps.svc:8000/v1')).toEqual([]);
  });

  it('Channel: keySecretRef with a non-empty name is required', () => {
    const rule = 'spec.keySecretRef: Invalid value: keySecretRef with a non-empty name is required';
    // The rule alone (what the API server adds to the schema's own checks).
    expect(celErrors(crd('Channel').schema, resource('Channel', { type: 1, models: ['m'] }))).toEqual([rule]);
    expect(errorsOf('Channel', { type: 1, keySecretRef: { name: '' }, models: ['m'] })).toEqual([
      'spec.keySecretRef.name: must NOT have fewer than 1 characters',
      rule,
    ]);
  });

  it('Channel: statusCodeMapping holds HTTP status codes', () => {
    const channel = (statusCodeMapping: Record<string, string>) =>
      errorsOf('Channel', { type: 1, keySecretRef: { name: 'k' }, models: ['m'], statusCodeMapping });
    expect(channel({ '429': '503' })).toEqual([]);
    const rule =
      'spec.statusCodeMapping: Invalid value: statusCodeMapping keys and values must be HTTP status codes (100-599)';
    expect(channel({ teapot: '500' })).toEqual([rule]);
    expect(channel({ '099': '500' })).toEqual([rule]);
    expect(channel({ '400': '200 ' })).toHaveLength(2); // too long for the schema, and not a code
    // A three-character key that is no number fails to evaluate, which rejects the object too.
    expect(channel({ abc: '500' })).toEqual([
      expect.stringMatching(/^spec.statusCodeMapping: Invalid value: rule .* failed to evaluate/),
    ]);
  });

  it('AccessToken: quota only, and always, when unlimitedQuota is false', () => {
    const onlyWhen = 'spec.quota: Invalid value: quota may only be set when unlimitedQuota is false';
    expect(errorsOf('AccessToken', { user: 'root', unlimitedQuota: true, quota: 100 })).toEqual([onlyWhen]);
    // unlimitedQuota defaults to true.
    expect(errorsOf('AccessToken', { user: 'root', quota: 100 })).toEqual([onlyWhen]);
    expect(errorsOf('AccessToken', { user: 'root', unlimitedQuota: false })).toEqual([
      'spec.quota: Invalid value: quota is required when unlimitedQuota is false',
    ]);
    expect(errorsOf('AccessToken', { user: 'root', unlimitedQuota: false, quota: 100 })).toEqual([]);
    expect(errorsOf('AccessToken', { user: 'root' })).toEqual([]);
  });

  it('AccessToken: the name leaves room for the default Secret name', () => {
    const long = 'a'.repeat(250);
    expect(errorsOf('AccessToken', { user: 'root' }, long)).toEqual([
      '<root>: Invalid value: metadata.name must be at most 247 characters unless spec.secretName is set (the Secret is named <name>-token)',
    ]);
    expect(errorsOf('AccessToken', { user: 'root', secretName: 'short' }, long)).toEqual([]);
  });

  it('Group: userGroupRatios values are not negative', () => {
    const group = { ratio: 1, userGroupRatios: { vip: -0.5 } };
    expect(celErrors(spec('Group'), group, 'spec')).toEqual([
      'spec.userGroupRatios: Invalid value: userGroupRatios keys must be non-empty and values must be >= 0',
    ]);
    expect(errorsOf('Group', group)).toContain('spec.userGroupRatios.vip: must be >= 0');
    expect(errorsOf('Group', { ratio: 1, userGroupRatios: { vip: 0.9, default: 0 } })).toEqual([]);
  });

  it('Group: rateLimits are whole numbers ≥ 0 of rpm and tpm per model', () => {
    expect(errorsOf('Group', { ratio: 1, rateLimits: { '*': { rpm: 10, tpm: 5000 }, 'gpt-4o': { tpm: 0 } } })).toEqual(
      [],
    );
    expect(errorsOf('Group', { ratio: 1, rateLimits: { '*': { rpm: -1 } } })).toContain(
      'spec.rateLimits.*.rpm: must be >= 0',
    );
    expect(errorsOf('Group', { ratio: 1, rateLimits: { '*': { tpm: 1.5 } } }).length).toBeGreaterThan(0);
  });

  it('GatewaySettings: option keys are 1-128 characters', () => {
    expect(errorsOf('GatewaySettings', { settings: { ['k'.repeat(129)]: '1' } })).toEqual([
      'spec.settings: Invalid value: option keys must be 1-128 characters long',
    ]);
  });

  it('schema errors come with field paths: unknown fields, enums, bounds, duplicates', () => {
    const errors = validateCustomResource({
      ...resource('Channel', {
        type: 0,
        keySecretRef: { name: 'k' },
        models: ['a', 'a'],
        multiKeyMode: 'sticky',
        colour: 'red',
      }),
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Ok', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
          { type: 'Ready', status: 'True', reason: 'Ok', message: '', lastTransitionTime: 'yesterday' },
        ],
      },
    });
    expect(errors).toEqual([
      'spec.colour: unknown field',
      'spec.type: must be >= 1',
      'spec.multiKeyMode: Unsupported value: supported values: "random", "polling"',
      'spec.models: must NOT have duplicate items (items ## 1 and 0 are identical)',
      'status.conditions[1].lastTransitionTime: must match format "date-time"',
      'status.conditions[1]: Duplicate value: ["Ready"]',
    ]);
    expect(validateCustomResource({ ...resource('Group', { ratio: 1 }), metadata: { name: 'Not_A_Name' } })).toEqual([
      'metadata.name: Invalid value: "Not_A_Name": must be a lowercase RFC 1123 subdomain',
    ]);
    expect(validateCustomResource({ ...resource('Group', { ratio: 1 }), apiVersion: 'tollgate.dev/v1' })).toEqual([
      '<root>: no CustomResourceDefinition serves Group in tollgate.dev/v1',
    ]);
  });
});

describe('deploy/examples', () => {
  const documents = exampleDocuments();
  const custom = documents.filter(({ doc }) => doc.apiVersion === API_VERSION);
  const ofKind = (kind: string) => custom.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc);

  it('every custom resource validates against its CRD (schema, defaults, CEL)', () => {
    expect(custom.length).toBeGreaterThanOrEqual(10);
    for (const { file, doc } of custom) {
      expect(validateCustomResource(doc), `${file} ${doc.kind}/${doc.metadata?.name}`).toEqual([]);
    }
  });

  it('show every kind: three providers, both price modes, default and vip groups, settings, a token', () => {
    const channels = ofKind('Channel');
    expect(channels.map((c) => c.spec.type).sort((a, b) => a - b)).toEqual([1, 14, 24]);
    expect(channels.find((c) => c.spec.type === 14)!.spec.modelMapping).toBeTruthy();
    const prices = ofKind('ModelPrice');
    expect(prices.some((p) => p.spec.perToken)).toBe(true);
    expect(prices.some((p) => p.spec.perCall)).toBe(true);
    const groups = ofKind('Group');
    expect(groups.map((g) => g.metadata.name).sort()).toEqual(['default', 'vip']);
    expect(groups.find((g) => g.metadata.name === 'vip')!.spec.userGroupRatios).toBeTruthy();
    expect(ofKind('GatewaySettings')).toHaveLength(1);
    expect(ofKind('AccessToken')).toHaveLength(1);
  });

  it('settings are real options with values the gateway accepts', () => {
    const settings = ofKind('GatewaySettings')[0]!.spec.settings as Record<string, string>;
    expect(Object.keys(settings)).toEqual(expect.arrayContaining(['RetryTimes', 'AutomaticDisableChannelEnabled']));
    for (const [key, value] of Object.entries(settings)) {
      expect(findOptionDefinition(key), key).toBeDefined();
      expect(() => validateOption(key, value), key).not.toThrow();
    }
  });

  it('channels read keys that the example Secrets hold', () => {
    const secrets = documents.filter(({ doc }) => doc.kind === 'Secret').map(({ doc }) => doc);
    for (const channel of ofKind('Channel').map((c) => defaultCustomResource(c) as Channel)) {
      const secret = secrets.find((s) => s.metadata.name === channel.spec.keySecretRef.name);
      expect(secret, channel.metadata.name).toBeDefined();
      expect(Object.keys(secret!.stringData ?? secret!.data)).toContain(channel.spec.keySecretRef.key);
    }
  });

  it('the sample Deployment reads apiKey and baseURL from the AccessToken Secret', () => {
    const token = ofKind('AccessToken')[0] as AccessToken;
    const secretName = token.spec.secretName ?? `${token.metadata.name}-token`;
    const deployment = documents.find(({ doc }) => doc.kind === 'Deployment')!.doc;
    const env = deployment.spec.template.spec.containers.flatMap((container: any) => container.env ?? []);
    const refs = env.map((variable: any) => variable.valueFrom?.secretKeyRef).filter(Boolean);
    expect(refs).toEqual([
      { name: secretName, key: 'apiKey' },
      { name: secretName, key: 'baseURL' },
    ]);
  });

  it('built-in objects validate against the Kubernetes schemas', () => {
    const models: Record<string, new (data: any) => { validate(): void }> = {
      'v1/Namespace': Namespace,
      'v1/Secret': Secret,
      'apps/v1/Deployment': Deployment,
    };
    const builtIn = documents.filter(({ doc }) => !doc.apiVersion.includes('.'));
    expect(builtIn.length).toBeGreaterThanOrEqual(5);
    for (const { file, doc } of builtIn) {
      const Model = models[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${file}: ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc).validate(), `${file} ${doc.kind}/${doc.metadata.name}`).not.toThrow();
    }
  });

  it('kustomization.yaml lists every manifest, all in the example namespace', () => {
    const kustomization = parse(readFileSync(join(EXAMPLES, 'kustomization.yaml'), 'utf8'));
    const manifests = readdirSync(EXAMPLES).filter(
      (name) => name.endsWith('.yaml') && name !== 'kustomization.yaml' && name !== 'argocd-application.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(manifests.sort());
    for (const { file, doc } of documents) {
      if (file === 'kustomization.yaml' || file === 'argocd-application.yaml' || doc.kind === 'Namespace') continue;
      expect(doc.metadata.namespace, `${file} ${doc.kind}/${doc.metadata.name}`).toBe(kustomization.namespace);
    }
  });

  it('the Argo CD Applications install the chart from charts/tollgate, then the examples', () => {
    const applications = documents.filter(({ file }) => file === 'argocd-application.yaml').map(({ doc }) => doc);
    expect(applications.map((app) => `${app.apiVersion} ${app.kind}`)).toEqual([
      'argoproj.io/v1alpha1 Application',
      'argoproj.io/v1alpha1 Application',
    ]);
    const [chart, examples] = applications as [any, any];
    expect(chart.spec.source.path).toBe('charts/tollgate');
    expect(chart.spec.source.helm.valuesObject).toBeTypeOf('object');
    expect(examples.spec.source.path).toBe('deploy/examples');
    expect(examples.spec.destination.namespace).toBe('ai-apps');
    const wave = (app: any) => Number(app.metadata.annotations['argocd.argoproj.io/sync-wave']);
    expect(wave(chart)).toBeLessThan(wave(examples));
    // The chart's operator watches the examples' namespace, and may mint their AccessTokens' keys.
    const operator = chart.spec.source.helm.valuesObject.operator;
    expect(operator.watchNamespaces).toContain(examples.spec.destination.namespace);
    for (const { doc } of documents.filter(({ doc }) => doc.kind === 'AccessToken'))
      expect(operator.accessTokenUsers[doc.metadata.namespace], doc.metadata.name).toContain(doc.spec.user);
  });

  it.skipIf(!existsSync(join(ROOT, 'charts/tollgate/values.schema.json')))(
    "the chart Application's values pass the chart's values.schema.json",
    () => {
      const chart = documents.find(({ file }) => file === 'argocd-application.yaml')!.doc;
      const defaults = parse(readFileSync(join(ROOT, 'charts/tollgate/values.yaml'), 'utf8'));
      const merge = (base: any, over: any): any =>
        over && typeof over === 'object' && !Array.isArray(over) && base && typeof base === 'object'
          ? Object.fromEntries(
              [...new Set([...Object.keys(base), ...Object.keys(over)])].map((key) => [
                key,
                merge(base[key], over[key]),
              ]),
            )
          : (over ?? base);
      const values = merge(defaults, chart.spec.source.helm.valuesObject);
      const schema = JSON.parse(readFileSync(join(ROOT, 'charts/tollgate/values.schema.json'), 'utf8'));
      const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
      expect(validate(values) ? [] : validate.errors).toEqual([]);
    },
  );
});

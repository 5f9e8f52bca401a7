/**
 * The Grafana dashboards (deploy/grafana) and Prometheus rules (deploy/prometheus) name metrics and labels
 * in PromQL strings that no compiler checks: a renamed metric or label leaves an empty panel or an alert that
 * can never fire. This test reads every expression, picks out the metric and label names, and checks them
 * against what is really exported: the gateway's names by scraping a running gateway's /metrics, the
 * operator's from its metrics module. It also checks the shape of the dashboards and the rule file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { createMetrics } from '../../gateway/src/metrics.ts';
import { createAffinityMetrics } from '../../gateway/src/relay/affinity/metrics.ts';
import { createCircuitMetrics } from '../../gateway/src/relay/health/circuit-metrics.ts';
import { createRelayMetrics, registerStateGauges } from '../../gateway/src/relay/metrics.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { scrapeMetrics } from '../support/metrics.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const grafanaDir = path.join(root, 'deploy/grafana');
const rulesDir = path.join(root, 'deploy/prometheus');
const operatorMetricsFile = path.join(root, 'operator/src/metrics.ts');

interface Family {
  name: string;
  type: string;
  labels: readonly string[];
}

/**
 * The operator's metrics as agreed with the operator's author. operator/src/metrics.ts registers them on a
 * prom-client Registry; when that module exists the test takes the operator's names from it instead, and
 * checks that it still exports every name below, so this list and the module cannot drift apart.
 */
const OPERATOR_METRICS: Family[] = [
  { name: 'tollgate_operator_reconcile_total', type: 'counter', labels: ['kind', 'result'] },
  { name: 'tollgate_operator_reconcile_errors_total', type: 'counter', labels: ['kind'] },
  { name: 'tollgate_operator_reconcile_duration_seconds', type: 'histogram', labels: ['kind'] },
  { name: 'tollgate_operator_queue_depth', type: 'gauge', labels: [] },
  { name: 'tollgate_operator_informer_restarts_total', type: 'counter', labels: ['kind'] },
  { name: 'tollgate_operator_last_event_age_seconds', type: 'gauge', labels: ['kind'] },
  { name: 'tollgate_operator_is_leader', type: 'gauge', labels: [] },
  { name: 'tollgate_operator_informer_synced', type: 'gauge', labels: ['kind'] },
  { name: 'tollgate_operator_list_errors_total', type: 'counter', labels: ['kind', 'reason'] },
];

/** Labels Prometheus adds to every series it scrapes from a Kubernetes target (ServiceMonitor or PodMonitor). */
const TARGET_LABELS = ['namespace', 'pod', 'instance', 'job', 'service', 'container', 'endpoint'];
/** Labels that name one process: a dashboard may filter on them only through a template variable. */
const INSTANCE_LABELS = ['namespace', 'pod', 'instance', 'job', 'service', 'container', 'node'];
/** The uid every panel and query reads from: the dashboard's data source variable. */
const DATASOURCE = `\${datasource}`;
/** Grafana's own variables, usable in any query. */
const GRAFANA_VARIABLES = ['__rate_interval', '__interval', '__range', '__range_s', '__interval_ms'];

// ---------------------------------------------------------------------------------------------------------
// A loose PromQL reader: enough to find metric and label names, not a parser.

const AGGREGATIONS = [
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
];
const KEYWORDS = new Set([
  ...AGGREGATIONS,
  ...['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset'],
  ...['atan2', 'inf', 'nan'],
]);
const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const LABEL_LIST = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/** The expression with each string literal replaced by `"<index>"` and Grafana variables outside strings blanked. */
function strip(expr: string): { text: string; strings: string[] } {
  const strings: string[] = [];
  const text = expr
    .replace(STRING, (literal) => `"${strings.push(literal.slice(1, -1)) - 1}"`)
    .replace(/\$(?:\{[^}]*\}|\w+)/g, ' ');
  return { text, strings };
}

/** Metric names in an expression: identifiers that are not functions, keywords, label names or durations. */
function metricNames(expr: string): string[] {
  const text = strip(expr)
    .text.replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(LABEL_LIST, ' ')
    // Grafana's label_values(selector, label): the label is not a metric.
    .replace(/\blabel_values\(([^()]*?),\s*[a-zA-Z_]\w*\s*\)/g, '($1)')
    .replace(/\blabel_values\(\s*[a-zA-Z_]\w*\s*\)/g, ' ');
  const names = new Set<string>();
  for (const match of text.matchAll(/(?<![\w:.])[a-zA-Z_:][\w:]*(?![\w:])/g)) {
    const name = match[0];
    const next = text.slice(match.index + name.length).trimStart()[0];
    if (next === '(' || KEYWORDS.has(name)) continue;
    names.add(name);
  }
  return [...names].sort();
}

interface Matcher {
  label: string;
  op: string;
  value: string;
}

/** Every `name{…}` or `{…}` selector with its label matchers; a matcher that does not read is returned as an error. */
function selectors(expr: string): Array<{ name: string | undefined; matchers: Matcher[]; errors: string[] }> {
  const { text, strings } = strip(expr);
  return [...text.matchAll(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g)].map((match) => {
    const errors: string[] = [];
    const matchers: Matcher[] = [];
    for (const part of (match[2] ?? '').split(',')) {
      if (!part.trim()) continue;
      const m = /^\s*([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"(\d+)"\s*$/.exec(part);
      if (m) matchers.push({ label: m[1]!, op: m[2]!, value: strings[Number(m[3])]! });
      else errors.push(`unreadable label matcher "${part.trim()}"`);
    }
    return { name: match[1], matchers, errors };
  });
}

/** Label names in by/without/on/ignoring/group_left/group_right clauses. */
function groupingLabels(expr: string): string[] {
  const labels = new Set<string>();
  for (const match of strip(expr).text.matchAll(LABEL_LIST))
    for (const label of (match[2] ?? '').split(',')) if (label.trim()) labels.add(label.trim());
  return [...labels];
}

/** Whether (), [] and {} pair up, strings aside. */
function balanced(expr: string): boolean {
  const open: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const char of expr.replace(STRING, '""')) {
    if ('([{'.includes(char)) open.push(char);
    else if (char in pairs && open.pop() !== pairs[char]) return false;
  }
  return open.length === 0;
}

// ---------------------------------------------------------------------------------------------------------
// The dashboards and rules.

interface Target {
  expr?: unknown;
  refId?: unknown;
  legendFormat?: unknown;
  datasource?: { type?: unknown; uid?: unknown };
}
interface Panel {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  gridPos?: { h?: unknown; w?: unknown; x?: unknown; y?: unknown };
  datasource?: { type?: unknown; uid?: unknown };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query?: unknown;
  allValue?: unknown;
  datasource?: { type?: unknown; uid?: unknown };
}
interface Dashboard {
  uid?: unknown;
  title?: unknown;
  schemaVersion?: unknown;
  panels?: Panel[];
  templating?: { list?: Variable[] };
}
interface Rule {
  record?: string;
  alert?: string;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}
interface RuleFile {
  groups?: Array<{ name?: unknown; rules?: Rule[] }>;
}

const dashboards = readdirSync(grafanaDir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({ file, dashboard: JSON.parse(readFileSync(path.join(grafanaDir, file), 'utf8')) as Dashboard }));
const ruleFiles = readdirSync(rulesDir)
  .filter((file) => /\.ya?ml$/.test(file))
  .sort()
  .map((file) => ({ file, content: parse(readFileSync(path.join(rulesDir, file), 'utf8')) as RuleFile }));
/** Every group of every rule file (the gateway's and the operator's). */
const ruleGroups = ruleFiles.flatMap(({ file, content }) => (content.groups ?? []).map((group) => ({ file, group })));
const rules = ruleGroups.flatMap(({ file, group }) => (group.rules ?? []).map((rule) => ({ ...rule, file })));

/** Every panel, the panels inside rows included. */
const allPanels = (panels: Panel[] = []): Panel[] => panels.flatMap((panel) => [panel, ...allPanels(panel.panels)]);
const variableQuery = (variable: Variable): string | undefined =>
  typeof variable.query === 'string'
    ? variable.query
    : typeof (variable.query as { query?: unknown } | undefined)?.query === 'string'
      ? (variable.query as { query: string }).query
      : undefined;

interface Query {
  where: string;
  expr: string;
  legend?: string;
  /** Dashboard queries must filter on instance labels through variables only. */
  dashboard: boolean;
}

const queries: Query[] = [
  ...dashboards.flatMap(({ file, dashboard }) => [
    ...allPanels(dashboard.panels).flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({
        where: `${file} panel ${panel.id} "${panel.title}" ${target.refId}`,
        expr: String(target.expr),
        ...(typeof target.legendFormat === 'string' ? { legend: target.legendFormat } : {}),
        dashboard: true,
      })),
    ),
    ...(dashboard.templating?.list ?? []).flatMap((variable) => {
      const query = variable.type === 'query' ? variableQuery(variable) : undefined;
      return query === undefined ? [] : [{ where: `${file} variable $${variable.name}`, expr: query, dashboard: true }];
    }),
  ]),
  ...rules.map((rule) => ({
    where: `${rule.file} ${rule.record ?? rule.alert}`,
    expr: String(rule.expr),
    dashboard: false,
  })),
];

/** Recording rules: the series name each defines, with the labels its aggregation keeps. */
const recorded = new Map(
  rules
    .filter((rule) => rule.record !== undefined)
    .map((rule) => [rule.record!, groupingLabels(String(rule.expr)).filter((label) => label !== 'le')]),
);

describe('the PromQL reader', () => {
  it('finds metric names and leaves functions, keywords, labels, durations and variables out', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, model) (rate(a_seconds_bucket{namespace=~"$namespace", x="y"}[$__rate_interval])))',
      ),
    ).toEqual(['a_seconds_bucket']);
    expect(
      metricNames('sum(rate(a_total[5m])) / ignoring(code) group_left sum(b) > bool 0.5 unless c offset 1h'),
    ).toEqual(['a_total', 'b', 'c']);
    expect(metricNames('max by (kind) (x and on (namespace, pod) (y == 1)) > 3600 or vector(0)')).toEqual(['x', 'y']);
    expect(metricNames('label_values(tollgate_build_info{namespace=~"$namespace"}, node)')).toEqual([
      'tollgate_build_info',
    ]);
    expect(metricNames('label_values(namespace)')).toEqual([]);
    expect(metricNames('ns:metric:rate5m > 1e3 and time() - d_seconds > 5')).toEqual(['d_seconds', 'ns:metric:rate5m']);
  });

  it('reads selectors and grouping labels', () => {
    expect(selectors('rate(a{x=~"$v", y!="b,c"}[5m]) / {__name__="d"}')).toEqual([
      {
        name: 'a',
        matchers: [
          { label: 'x', op: '=~', value: '$v' },
          { label: 'y', op: '!=', value: 'b,c' },
        ],
        errors: [],
      },
      { name: undefined, matchers: [{ label: '__name__', op: '=', value: 'd' }], errors: [] },
    ]);
    expect(groupingLabels('sum by (a, b) (x) * on (c) group_left (d) y')).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('the Grafana dashboards', () => {
  it('include the four Tollgate dashboards', () => {
    expect(dashboards.map(({ file }) => file)).toEqual(
      expect.arrayContaining([
        'tollgate-channels.json',
        'tollgate-internals.json',
        'tollgate-operator.json',
        'tollgate-traffic.json',
      ]),
    );
  });

  it('have unique uids, a Prometheus data source variable, and panels that read from it', () => {
    const problems: string[] = [];
    const uids = new Set<unknown>();
    for (const { file, dashboard } of dashboards) {
      const problem = (message: string) => problems.push(`${file}: ${message}`);
      if (typeof dashboard.uid !== 'string' || !dashboard.uid) problem('no uid');
      if (uids.has(dashboard.uid)) problem(`uid ${dashboard.uid} used twice`);
      uids.add(dashboard.uid);
      if (typeof dashboard.title !== 'string' || !dashboard.title) problem('no title');
      if (typeof dashboard.schemaVersion !== 'number' || dashboard.schemaVersion < 36)
        problem('schemaVersion below 36');
      const variables = dashboard.templating?.list ?? [];
      const datasource = variables.find((variable) => variable.name === 'datasource');
      if (datasource?.type !== 'datasource' || datasource.query !== 'prometheus')
        problem('no "datasource" template variable of Prometheus data sources');
      for (const variable of variables)
        if (variable.type === 'query' && variable.datasource?.uid !== DATASOURCE)
          problem(`variable $${variable.name} does not query \${datasource}`);

      const ids = new Set<unknown>();
      const boxes: Array<{ id: unknown; x: number; y: number; w: number; h: number }> = [];
      for (const panel of allPanels(dashboard.panels)) {
        const name = `panel ${panel.id} "${panel.title}"`;
        if (typeof panel.id !== 'number') problem(`${name}: no numeric id`);
        if (ids.has(panel.id)) problem(`${name}: id used twice`);
        ids.add(panel.id);
        const { x, y, w, h } = panel.gridPos ?? {};
        if (![x, y, w, h].every((n) => Number.isInteger(n))) problem(`${name}: gridPos needs integer x, y, w and h`);
        else if ((x as number) < 0 || (w as number) < 1 || (x as number) + (w as number) > 24 || (h as number) < 1)
          problem(`${name}: gridPos outside the 24-column grid`);
        else boxes.push({ id: panel.id, x: x as number, y: y as number, w: w as number, h: h as number });
        if (panel.type === 'row') continue;
        if (typeof panel.title !== 'string' || !panel.title) problem(`${name}: no title`);
        if (panel.datasource?.type !== 'prometheus' || panel.datasource.uid !== DATASOURCE)
          problem(`${name}: data source is not the \${datasource} variable`);
        if (!panel.targets?.length) problem(`${name}: no targets`);
        const refIds = new Set<unknown>();
        for (const target of panel.targets ?? []) {
          if (typeof target.expr !== 'string' || !target.expr.trim()) problem(`${name}: a target without expr`);
          if (typeof target.refId !== 'string' || refIds.has(target.refId))
            problem(`${name}: missing or repeated refId`);
          refIds.add(target.refId);
          if (target.datasource?.uid !== DATASOURCE) problem(`${name} ${target.refId}: target data source`);
        }
      }
      for (const [i, a] of boxes.entries())
        for (const b of boxes.slice(i + 1))
          if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
            problem(`panels ${a.id} and ${b.id} overlap`);
    }
    expect(problems).toEqual([]);
  });

  it('use only variables they define, and name no instance except through a variable', () => {
    const problems: string[] = [];
    for (const { file, dashboard } of dashboards) {
      const defined = new Set([...(dashboard.templating?.list ?? []).map((v) => v.name), ...GRAFANA_VARIABLES]);
      for (const query of queries.filter((q) => q.where.startsWith(`${file} `))) {
        for (const [, name] of query.expr.matchAll(/\$\{?(\w+)/g))
          if (!defined.has(name!)) problems.push(`${query.where}: undefined variable $${name}`);
        for (const selector of selectors(query.expr))
          for (const matcher of selector.matchers)
            if (INSTANCE_LABELS.includes(matcher.label) && !matcher.value.includes('$'))
              problems.push(`${query.where}: hard-coded ${matcher.label}${matcher.op}"${matcher.value}"`);
      }
    }
    expect(problems).toEqual([]);
  });
});

/** Only Tollgate exports tollgate_* series; any other name (gen_ai_*, http_server_*, process_*) others may share. */
const OURS_ALONE = /^tollgate_/;
/** allValue settings under which "All" matches every value Prometheus has, not just Tollgate's. */
const MATCH_ALL = new Set(['.*', '.+', '']);

describe('the dashboards scoped to Tollgate', () => {
  it('fill every variable from a Tollgate metric', () => {
    const problems: string[] = [];
    for (const { file, dashboard } of dashboards)
      for (const variable of dashboard.templating?.list ?? []) {
        const query = variable.type === 'query' ? variableQuery(variable) : undefined;
        if (query === undefined) continue;
        const names = metricNames(query);
        if (names.length === 0 || !names.every((name) => OURS_ALONE.test(name)))
          problems.push(`${file} $${variable.name}: ${query} reads other applications' series`);
      }
    expect(problems).toEqual([]);
  });

  it('limit every metric other applications may also export to the jobs that export Tollgate metrics', () => {
    const problems: string[] = [];
    let scoped = 0;
    for (const { file, dashboard } of dashboards) {
      // Variables whose every value, "All" included, is one a Tollgate series carries.
      const own = new Set(
        (dashboard.templating?.list ?? [])
          .filter((v) => {
            const names = v.type === 'query' ? metricNames(variableQuery(v) ?? '') : [];
            const allValue = v.allValue === undefined ? undefined : String(v.allValue).trim();
            return names.length > 0 && names.every((n) => OURS_ALONE.test(n)) && !MATCH_ALL.has(allValue ?? 'unset');
          })
          .map((v) => `$${v.name}`),
      );
      for (const query of queries.filter((q) => q.where.startsWith(`${file} `)))
        for (const selector of selectors(query.expr)) {
          if (!selector.name || OURS_ALONE.test(selector.name) || selector.name.includes(':')) continue;
          const limited = selector.matchers.some(
            (m) => ['job', 'instance', 'pod'].includes(m.label) && ['=', '=~'].includes(m.op) && own.has(m.value),
          );
          if (limited) scoped++;
          else problems.push(`${query.where}: ${selector.name} is not limited to Tollgate's jobs (job=~"$job")`);
        }
    }
    expect(problems).toEqual([]);
    expect(scoped).toBeGreaterThan(20);
  });
});

describe('the Prometheus rules', () => {
  it('are groups of rules, each a recording rule or an alert', () => {
    expect(ruleFiles.map(({ file }) => file)).toEqual(['tollgate-operator-rules.yaml', 'tollgate-rules.yaml']);
    for (const { file, content } of ruleFiles) expect(content.groups?.length, file).toBeGreaterThan(0);
    const problems: string[] = [];
    const groupNames = new Set<unknown>();
    const names = new Set<string>();
    for (const { group } of ruleGroups) {
      if (typeof group.name !== 'string' || groupNames.has(group.name)) problems.push(`group ${group.name}: bad name`);
      groupNames.add(group.name);
      if (!Array.isArray(group.rules) || group.rules.length === 0) problems.push(`group ${group.name}: no rules`);
      for (const rule of group.rules ?? []) {
        const name = rule.record ?? rule.alert ?? '(unnamed)';
        if ((rule.record === undefined) === (rule.alert === undefined))
          problems.push(`${name}: needs exactly one of record and alert`);
        if (typeof rule.expr !== 'string' || !rule.expr.trim()) problems.push(`${name}: no expr`);
        else if (!balanced(rule.expr)) problems.push(`${name}: unbalanced brackets in expr`);
        if (rule.record !== undefined) {
          if (!/^[a-zA-Z_]\w*(:\w+)+$/.test(rule.record)) problems.push(`${name}: not a level:metric:operations name`);
          if (names.has(rule.record)) problems.push(`${name}: recorded twice`);
          names.add(rule.record);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('give every alert a duration, a severity, a summary, a description and a runbook hint', () => {
    const alerts = rules.filter((rule) => rule.alert !== undefined);
    expect(alerts.map((alert) => alert.alert)).toEqual(
      expect.arrayContaining([
        'TollgateHighErrorRate',
        'TollgateChannelAutoDisabled',
        'TollgateUsageLogQueueBackingUp',
        'TollgateUsageLogFlushFailing',
        'TollgateLedgerUnflushedGrowing',
        'TollgateOperatorNoLeader',
        'TollgateOperatorReconcileFailing',
        'TollgateOperatorStuck',
        'TollgateOperatorCannotList',
      ]),
    );
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const alert of alerts) {
      const name = alert.alert!;
      if (!/^[A-Z][A-Za-z0-9]+$/.test(name) || seen.has(name)) problems.push(`${name}: bad or repeated alert name`);
      seen.add(name);
      if (typeof alert.for !== 'string' || !/^\d+[smhdwy]$/.test(alert.for))
        problems.push(`${name}: no "for" duration`);
      if (!['critical', 'warning', 'info'].includes(String(alert.labels?.severity)))
        problems.push(`${name}: labels.severity must be critical, warning or info`);
      for (const annotation of ['summary', 'description'])
        if (typeof alert.annotations?.[annotation] !== 'string' || !alert.annotations[annotation])
          problems.push(`${name}: no annotations.${annotation}`);
      if (!alert.annotations?.runbook && !alert.annotations?.runbook_url) problems.push(`${name}: no runbook hint`);
    }
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The names against what the gateway and the operator export.

/** Metric families of a registry, with the label names each was declared with. */
function familiesOf(registry: Pick<Registry, 'getMetricsAsArray'>): Family[] {
  return registry.getMetricsAsArray().map((metric) => ({
    name: metric.name,
    type: String(metric.type),
    labels: (metric as { labelNames?: readonly string[] }).labelNames ?? [],
  }));
}

const isRegistry = (value: unknown): value is Pick<Registry, 'getMetricsAsArray'> =>
  typeof (value as { getMetricsAsArray?: unknown } | null)?.getMetricsAsArray === 'function';

/**
 * The operator's metrics from operator/src/metrics.ts: each exported function whose name mentions metrics
 * (`createMetrics`) is called, and whatever it registers on the registry it returns (`{ registry }`), or on
 * the fresh Registry it is given, is collected.
 */
async function loadOperatorFamilies(): Promise<Family[]> {
  const module = (await import(pathToFileURL(operatorMetricsFile).href)) as Record<string, unknown>;
  const found = new Map<string, Family>();
  for (const [name, value] of Object.entries(module)) {
    if (typeof value !== 'function' || !/metric/i.test(name)) continue;
    const registry = new Registry();
    let result: unknown;
    try {
      result = await value(registry);
    } catch {
      continue;
    }
    for (const candidate of [registry, result, (result as { registry?: unknown } | null)?.registry])
      if (isRegistry(candidate)) for (const family of familiesOf(candidate)) found.set(family.name, family);
  }
  return [...found.values()];
}

/** `# TYPE name type` lines of a Prometheus text exposition: every family, with or without samples. */
function scrapedFamilies(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1]!, match[2]!]));
}

let gateway: Gateway | undefined;
let drop: (() => Promise<void>) | undefined;
/** Families the running gateway exports, by name, with their declared label names. */
const gatewayFamilies = new Map<string, Family>();
/** Labels the gateway puts on every series (its registry's default labels). */
let gatewayDefaultLabels: string[] = [];
const operatorFamilies = new Map<string, Family>();
const operatorModuleExists = existsSync(operatorMetricsFile);

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const text = await scrapeMetrics(gateway);
  const scraped = scrapedFamilies(text);

  // The scrape says which families exist; the label names they were declared with come from building the
  // same metrics here (the exposition only shows labels of samples, and most families have none yet).
  const declared = createMetrics({ version: 'test', node: 'test' });
  createRelayMetrics(declared.registry);
  createAffinityMetrics(declared.registry);
  createCircuitMetrics(declared.registry, () => new Map());
  const unread = () => {
    throw new Error('not read: only the declarations are inspected');
  };
  registerStateGauges(declared.registry, { ledger: unread, usage: unread });
  const labels = new Map(familiesOf(declared.registry).map((family) => [family.name, family.labels]));
  for (const [name, type] of scraped) gatewayFamilies.set(name, { name, type, labels: labels.get(name) ?? [] });

  const buildInfo = /^tollgate_build_info\{([^}]*)\} 1$/m.exec(text);
  expect(buildInfo, 'tollgate_build_info sample').not.toBeNull();
  gatewayDefaultLabels = [...buildInfo![1]!.matchAll(/(\w+)="/g)].map((m) => m[1]!).filter((l) => l !== 'version');

  for (const family of operatorModuleExists ? await loadOperatorFamilies() : OPERATOR_METRICS)
    operatorFamilies.set(family.name, family);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

/** The family a series name belongs to: histograms and summaries only through their _bucket/_sum/_count series. */
function familyOf(name: string): Family | undefined {
  const lookup = (n: string) => operatorFamilies.get(n) ?? gatewayFamilies.get(n);
  const family = lookup(name);
  if (family) return family.type === 'histogram' || family.type === 'summary' ? undefined : family;
  const [, base, suffix] = /^(.+)_(bucket|sum|count)$/.exec(name) ?? [];
  const parent = base ? lookup(base) : undefined;
  if (parent?.type === 'histogram' || (parent?.type === 'summary' && suffix !== 'bucket')) return parent;
  return undefined;
}

/** Labels a series of this name carries once scraped. */
function labelsOf(name: string): string[] | undefined {
  if (recorded.has(name)) return recorded.get(name);
  const family = familyOf(name);
  if (!family) return undefined;
  const own = gatewayFamilies.has(family.name) ? gatewayDefaultLabels : [];
  return [...family.labels, ...own, ...TARGET_LABELS, ...(name.endsWith('_bucket') ? ['le'] : [])];
}

/** Every label any series in the expression carries, plus the ones its aggregations name. */
const labelsIn = (expr: string) =>
  new Set([...metricNames(expr).flatMap((name) => labelsOf(name) ?? []), ...TARGET_LABELS, ...groupingLabels(expr)]);

describe('the metric names in dashboards and rules', () => {
  it('scrapes the gateway and reads the operator', () => {
    expect(gatewayFamilies.size).toBeGreaterThan(20);
    expect(gatewayDefaultLabels).toContain('node');
    expect(operatorFamilies.size).toBeGreaterThanOrEqual(OPERATOR_METRICS.length);
  });

  it.runIf(operatorModuleExists)('operator/src/metrics.ts exports every agreed metric', () => {
    for (const agreed of OPERATOR_METRICS) {
      const family = operatorFamilies.get(agreed.name);
      expect(family, agreed.name).toBeDefined();
      expect(family?.type).toBe(agreed.type);
      expect([...(family?.labels ?? [])].sort()).toEqual([...agreed.labels].sort());
    }
  });

  it('are all exported by the gateway or the operator, or recorded by a rule', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const query of queries) {
      const names = metricNames(query.expr);
      if (names.length === 0) problems.push(`${query.where}: no metric found in ${JSON.stringify(query.expr)}`);
      for (const name of names) {
        checked++;
        if (name.includes(':')) {
          if (!recorded.has(name)) problems.push(`${query.where}: ${name} is recorded by no rule`);
        } else if (!familyOf(name)) {
          const family = operatorFamilies.get(name) ?? gatewayFamilies.get(name);
          problems.push(
            family
              ? `${query.where}: ${name} is a ${family.type}; query its _bucket, _sum or _count series`
              : `${query.where}: ${name} is not exported`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('use only labels those metrics carry', () => {
    const problems: string[] = [];
    for (const query of queries) {
      const available = labelsIn(query.expr);
      for (const selector of selectors(query.expr)) {
        problems.push(...selector.errors.map((error) => `${query.where}: ${error}`));
        const own = selector.name ? labelsOf(selector.name) : undefined;
        for (const matcher of selector.matchers)
          if (own && matcher.label !== '__name__' && !own.includes(matcher.label))
            problems.push(`${query.where}: ${selector.name} has no label ${matcher.label}`);
      }
      for (const label of groupingLabels(query.expr).filter((l) => l !== 'le'))
        if (!metricNames(query.expr).some((name) => labelsOf(name)?.includes(label)))
          problems.push(`${query.where}: no metric in the expression has label ${label}`);
      for (const [, label] of (query.legend ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g))
        if (!available.has(label!)) problems.push(`${query.where}: legend names label ${label}, which no series has`);
      const [, selector, label] = /^\s*label_values\((.*),\s*(\w+)\s*\)\s*$/.exec(query.expr) ?? [];
      if (selector && label && !metricNames(selector).every((name) => labelsOf(name)?.includes(label)))
        problems.push(`${query.where}: label_values of ${label}, which ${selector} does not have`);
    }
    for (const alert of rules.filter((rule) => rule.alert !== undefined)) {
      const available = labelsIn(String(alert.expr));
      for (const text of Object.values(alert.annotations ?? {}))
        for (const [, label] of String(text).matchAll(/\$labels\.(\w+)/g))
          if (!available.has(label!))
            problems.push(`${alert.alert}: annotation names label ${label}, which no series has`);
    }
    expect(problems).toEqual([]);
  });

  it('cover every Tollgate metric of the gateway and the operator on some dashboard', () => {
    const shown = new Set(
      queries
        .filter((query) => query.dashboard)
        .flatMap((query) => metricNames(query.expr))
        .map((name) => familyOf(name)?.name),
    );
    const ours = [...gatewayFamilies.values(), ...operatorFamilies.values()].filter((family) =>
      /^(tollgate_|gen_ai_|http_server_)/.test(family.name),
    );
    expect(ours.filter((family) => !shown.has(family.name)).map((family) => family.name)).toEqual([]);
  });
});

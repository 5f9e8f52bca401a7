import { errors } from './errors.ts';
import type { KubeObject } from './store.ts';

/**
 * Label selectors (equality- and set-based, as `kubectl -l` and the API accept them) and the field selectors the
 * API server supports on every resource (`metadata.name`, `metadata.namespace`; `type` on Secrets).
 */

type Operator = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists';

interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

export type Matcher = (object: KubeObject) => boolean;

const matchAll: Matcher = () => true;

/** Splits on commas outside parentheses: `a in (x,y),b` → [`a in (x,y)`, `b`]. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

const KEY = /^([a-z0-9A-Z]([a-z0-9A-Z._/-]*[a-z0-9A-Z])?)$/;
const VALUE = /^(([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)$/;

function parseLabelTerm(term: string): Requirement {
  const fail = () => errors.badRequest(`unable to parse requirement: found '${term}', expected a valid label selector`);
  let m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (m) {
    const values = m[3]!
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (!KEY.test(m[1]!) || values.some((v) => !VALUE.test(v))) throw fail();
    return { key: m[1]!, op: m[2] as Operator, values };
  }
  m = /^!\s*(\S+)$/.exec(term);
  if (m) {
    if (!KEY.test(m[1]!)) throw fail();
    return { key: m[1]!, op: 'notexists', values: [] };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) {
    if (!KEY.test(m[1]!) || !VALUE.test(m[3]!)) throw fail();
    return { key: m[1]!, op: m[2] === '!=' ? 'neq' : 'eq', values: [m[3]!] };
  }
  if (KEY.test(term)) return { key: term, op: 'exists', values: [] };
  throw fail();
}

function matches(labels: Record<string, string>, r: Requirement): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'eq':
      return has && value === r.values[0];
    case 'neq':
      return !has || value !== r.values[0];
    case 'in':
      return has && r.values.includes(value!);
    case 'notin':
      return !has || !r.values.includes(value!);
    case 'exists':
      return has;
    case 'notexists':
      return !has;
  }
}

/** Parses `labelSelector`; throws a 400 Status for a malformed one. */
export function parseLabelSelector(selector: string | null | undefined): Matcher {
  if (!selector) return matchAll;
  const requirements = splitTerms(selector).map(parseLabelTerm);
  return (object) => {
    const labels = (object.metadata?.labels ?? {}) as Record<string, string>;
    return requirements.every((r) => matches(labels, r));
  };
}

/** Parses `fieldSelector`; `fields` maps each supported field to its getter. Throws a 400 Status otherwise. */
export function parseFieldSelector(selector: string | null | undefined, kind: string): Matcher {
  if (!selector) return matchAll;
  const getters: Record<string, (o: KubeObject) => string> = {
    'metadata.name': (o) => o.metadata?.name ?? '',
    'metadata.namespace': (o) => o.metadata?.namespace ?? '',
  };
  if (kind === 'Secret') getters.type = (o) => String((o as { type?: unknown }).type ?? '');
  const requirements = splitTerms(selector).map((term) => {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw errors.badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const get = getters[m[1]!];
    if (!get) throw errors.badRequest(`field label not supported: ${m[1]}`);
    return { get, negate: m[2] === '!=', value: m[3]! };
  });
  return (object) => requirements.every((r) => (r.get(object) === r.value) !== r.negate);
}

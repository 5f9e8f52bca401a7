/**
 * A small, seeded request fuzzer over the gateway's own OpenAPI document: for every operation it builds
 * requests whose path ids, query values and body fields are the hostile values a prober sends (huge and
 * non-finite numbers, NUL bytes, lone surrogates, deep nesting, wrong types). Same seed, same requests.
 */

/** A deterministic PRNG (mulberry32): the fuzz run is reproducible from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON text nested `depth` levels deep, built as text: JSON.stringify itself overflows on very deep values. */
export const deepText = (depth: number): string => `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;

/** A JSON value nested `depth` levels deep. */
export const deepValue = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};

/** Text values as they appear in a URL (path or query): numbers out of range, non-numbers, bad text. */
export const HOSTILE_TEXT = [
  '1e308',
  '1e20',
  'Infinity',
  '-Infinity',
  'NaN',
  '-1',
  '0',
  '2147483648',
  '9007199254740993',
  '-9223372036854775809',
  '1.5',
  'abc',
  'a\u0000b',
  '\ud800',
  'x'.repeat(5000),
] as const;

/** Values a JSON body can carry where a field is expected. */
export const HOSTILE_JSON: readonly unknown[] = [
  1e308,
  -1e308,
  1e20,
  -1,
  2147483648,
  2 ** 60,
  1.5,
  'a\u0000b',
  '\ud800x',
  '1e308',
  true,
  [],
  {},
  [1, 'x'],
  deepValue(40),
];

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  enum?: unknown[];
  minimum?: number;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema?: SchemaNode;
}

export interface Operation {
  method: string;
  /** The path template, e.g. /api/token/{id}. */
  path: string;
  parameters: Parameter[];
  body?: SchemaNode | undefined;
}

export interface FuzzRequest {
  method: string;
  /** The concrete path with its query string. */
  url: string;
  /** The JSON text of the body, if any (a string, so a lone surrogate reaches the server as written). */
  body?: string | undefined;
  /** What was made hostile, for the failure report. */
  note: string;
}

/** Every operation of an OpenAPI 3 document. */
export function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []) as Parameter[],
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

/** A plausible value for a schema: the baseline that one hostile field is swapped into. */
function plausible(schema: SchemaNode | undefined, depth = 0): unknown {
  if (!schema || depth > 4) return undefined;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (branch) return plausible(branch, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      return 'fuzz';
    case 'array':
      return [];
    case 'object': {
      const record: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        const value = plausible(property, depth + 1);
        if (value !== undefined) record[key] = value;
      }
      return record;
    }
    default:
      return undefined;
  }
}

const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

/** Percent-encodes text; a lone surrogate goes out as the bytes a careless client would send (CESU-8). */
const encodeText = (text: string) =>
  text
    .replace(/\ud800/g, '\u0001')
    .split('\u0001')
    .map(encodeURIComponent)
    .join('%ED%A0%80');

/** A request's path with each `{param}` filled by `fill`. */
const fillPath = (template: string, fill: (name: string) => string) =>
  template.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeText(fill(name)));

/**
 * `count` hostile variants of one operation: each makes one place hostile (a path parameter, a query
 * parameter, a body field, the whole body) and keeps the rest plausible. `knownId` fills path ids that are
 * not the hostile part, so body checks reach a real record.
 */
export function fuzzOperation(
  operation: Operation,
  random: () => number,
  count: number,
  knownId: string,
): FuzzRequest[] {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const baseline = plausible(operation.body);
  const bodyFields = baseline && typeof baseline === 'object' ? Object.keys(baseline) : [];
  const requests: FuzzRequest[] = [];
  const hasBody = operation.method !== 'GET' && operation.method !== 'DELETE';
  for (let i = 0; i < count; i++) {
    const targets = [
      ...pathParams.map((p) => `path:${p.name}`),
      ...queryParams.map((p) => `query:${p.name}`),
      ...(hasBody ? bodyFields.map((f) => `body:${f}`) : []),
      ...(hasBody ? ['body:*'] : []),
    ];
    const target = targets.length > 0 ? pick(random, targets) : 'none';
    const [place, name] = target.split(':') as [string, string];
    const hostileText = pick(random, HOSTILE_TEXT);
    // A DELETE on a real record would remove the fuzz run's own fixtures: its id is always the hostile part.
    const path = fillPath(operation.path, (param) =>
      (place === 'path' && param === name) || operation.method === 'DELETE' ? hostileText : knownId,
    );
    const search = place === 'query' ? `${encodeText(name)}=${encodeText(hostileText)}` : '';
    let body: string | undefined;
    let note = `${target}=${JSON.stringify(hostileText).slice(0, 40)}`;
    if (hasBody) {
      const record = { ...((baseline as Record<string, unknown>) ?? {}) };
      if (place === 'body' && name !== '*') {
        const value = pick(random, HOSTILE_JSON);
        record[name] = value;
        note = `${target}=${JSON.stringify(value).slice(0, 40)}`;
        body = JSON.stringify(record);
      } else if (place === 'body') {
        body = pick(random, [deepText(5000), deepText(17), '"a\\u0000b"', '1e308', '[]', 'null', '{"a":']);
        note = `body=${body.slice(0, 40)}`;
      } else {
        body = JSON.stringify(record);
      }
    }
    requests.push({ method: operation.method, url: search ? `${path}?${search}` : path, body, note });
  }
  return requests;
}

/** The console's /rest resources (DESIGN.md §2): the OpenAPI document has one `/rest/{resource}` route for all. */
export const REST_RESOURCES = ['user', 'token', 'redemption', 'channel', 'log', 'midjourney', 'task'] as const;

/**
 * `count` hostile /rest requests for one resource: lists with hostile range, sort and filter; records with
 * hostile ids; and edits of record `knownId` (whose current fields are `fields`) with one field made hostile.
 */
export function fuzzRest(
  resource: string,
  fields: string[],
  random: () => number,
  count: number,
  knownId: string,
): FuzzRequest[] {
  const requests: FuzzRequest[] = [];
  const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));
  for (let i = 0; i < count; i++) {
    const hostile = pick(random, HOSTILE_JSON);
    const hostileText = pick(random, HOSTILE_TEXT);
    const field = fields.length > 0 ? pick(random, fields) : 'name';
    const note = `${field}=${JSON.stringify(hostile)?.slice(0, 40)}`;
    switch (pick(random, ['range', 'sort', 'filter', 'id', 'put', 'post'] as const)) {
      case 'range':
        requests.push({ method: 'GET', url: `/rest/${resource}?range=${json([0, hostile])}`, note: `range ${note}` });
        break;
      case 'sort':
        requests.push({ method: 'GET', url: `/rest/${resource}?sort=${json([field, hostile])}`, note: `sort ${note}` });
        break;
      case 'filter':
        requests.push({ method: 'GET', url: `/rest/${resource}?filter=${json({ [field]: hostile })}`, note });
        break;
      case 'id':
        requests.push({ method: 'GET', url: `/rest/${resource}/${encodeText(hostileText)}`, note: hostileText });
        break;
      case 'put':
        requests.push({
          method: 'PUT',
          url: `/rest/${resource}/${knownId}`,
          body: JSON.stringify({ [field]: hostile }),
          note,
        });
        break;
      case 'post':
        requests.push({ method: 'POST', url: `/rest/${resource}`, body: JSON.stringify({ [field]: hostile }), note });
        break;
    }
  }
  return requests;
}

/** Filters react-admin's lists send besides a record's own fields (see gateway/src/rest/resources). */
const REST_FILTER_NAMES = ['q', 'id', 'status', 'type', 'role', 'user_id', 'channel_id', 'channel', 'start_timestamp'];

/** Every filter of a /rest list (the record's fields and the known ones) with each out-of-range number. */
export function restFilterSweep(resource: string, fields: string[]): FuzzRequest[] {
  const requests: FuzzRequest[] = [];
  for (const name of new Set([...fields, ...REST_FILTER_NAMES])) {
    for (const value of [2147483648, 1e308, -1e20, 1.5]) {
      const filter = encodeURIComponent(JSON.stringify({ [name]: value }));
      requests.push({ method: 'GET', url: `/rest/${resource}?filter=${filter}`, note: `filter ${name}=${value}` });
    }
  }
  return requests;
}

/**
 * Beside the random variants: every path and query parameter of an operation with each out-of-range or
 * malformed text value, and (with `bodies`) every body field with each hostile JSON value.
 */
export function operationSweep(operation: Operation, knownId: string, bodies: boolean): FuzzRequest[] {
  const requests: FuzzRequest[] = [];
  const hasBody = operation.method !== 'GET' && operation.method !== 'DELETE';
  const baseline = hasBody ? ((plausible(operation.body) as Record<string, unknown> | undefined) ?? {}) : undefined;
  const body = baseline === undefined ? undefined : JSON.stringify(baseline);
  const texts = ['2147483648', 'Infinity', '1e308', '-1e20', 'a\u0000b', '\ud800'];
  for (const parameter of operation.parameters.filter((p) => p.in === 'path' || p.in === 'query')) {
    for (const value of texts) {
      const path = fillPath(operation.path, (name) =>
        (parameter.in === 'path' && name === parameter.name) || operation.method === 'DELETE' ? value : knownId,
      );
      const url = parameter.in === 'query' ? `${path}?${encodeText(parameter.name)}=${encodeText(value)}` : path;
      requests.push({ method: operation.method, url, body, note: `${parameter.in}:${parameter.name}=${value}` });
    }
  }
  if (bodies && baseline) {
    const path = fillPath(operation.path, () => knownId);
    for (const field of Object.keys(baseline)) {
      for (const value of [1e308, 2147483648, 'a\u0000b', { a: [1] }]) {
        const note = `body:${field}=${JSON.stringify(value)}`;
        requests.push({
          method: operation.method,
          url: path,
          body: JSON.stringify({ ...baseline, [field]: value }),
          note,
        });
      }
    }
  }
  return requests;
}

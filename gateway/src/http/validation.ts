import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = { allErrors: false, removeAdditional: false, useDefaults: true, allowUnionTypes: true };
// Query strings and path params arrive as text, so they are coerced; JSON bodies are typed already,
// and a number where a string belongs is a client error, not something to paper over.
const coercing = new Ajv({ ...common, coerceTypes: 'array' });
const strict = new Ajv({ ...common, coerceTypes: false });
// "Infinity" in a query string coerces to Infinity, which Ajv's own `maximum` lets through (it only checks
// finite numbers); `finite` refuses it.
const finite = Object.assign(
  (wanted: boolean, data: unknown) => {
    if (!wanted || typeof data !== 'number' || Number.isFinite(data)) return true;
    finite.errors = [{ keyword: 'finite', message: 'must be a finite number', params: {} }];
    return false;
  },
  { errors: undefined as Array<Partial<ErrorObject>> | undefined },
);
for (const ajv of [coercing, strict]) ajv.addKeyword({ keyword: 'finite', schemaType: 'boolean', validate: finite });

interface SchemaNode {
  type?: string | string[];
  nullable?: boolean;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
}

/** Postgres `integer` (int4), the column type of every id: a larger id cannot exist, and there it overflows. */
export const INT4_MAX = 2_147_483_647;

const isNumeric = (type: unknown) =>
  type === 'integer' ||
  type === 'number' ||
  (Array.isArray(type) && type.some((t) => t === 'integer' || t === 'number'));
const isIdName = (name: string | undefined) => name === 'id' || (name?.endsWith('_id') ?? false);
// Query filters are compared with int4 columns (ids, status, type, channel) unless they are times or money.
const BIGINT_FILTER = /timestamp|_time$|_at$|quota|amount/;

/** The largest magnitude a filter on `name` may have: int4 unless it is a time or an amount (bigint). */
export const filterLimit = (name: string): number => (BIGINT_FILTER.test(name) ? Number.MAX_SAFE_INTEGER : INT4_MAX);

/** Which range a number has where its schema names none: int4 for ids, JavaScript's exact integers otherwise. */
export type NumberScope = 'params' | 'querystring' | 'body';

/**
 * Every number a route accepts has a real range, so 1e308, 1e20 or Infinity (which coerces from a query
 * string) is a 400 instead of an overflow in Postgres. Where a schema names no bound: a path parameter, an
 * id (`id`, `*_id`) and a query filter other than a time or an amount get int4's range; any other number
 * the range JavaScript keeps exact (±2^53); and none may be infinite. Answers a bounded copy; the route's
 * own schema (the API's documentation) is left as written.
 */
export function boundNumbers(schema: unknown, scope: NumberScope = 'body', name?: string, depth = 0): unknown {
  if (Array.isArray(schema)) return schema.map((item) => boundNumbers(item, scope, name, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) {
      copy[key] = Object.fromEntries(
        Object.entries(value).map(([property, sub]) => [property, boundNumbers(sub, scope, property, depth + 1)]),
      );
    } else if (['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties'].includes(key)) {
      copy[key] = boundNumbers(value, scope, key === 'additionalProperties' ? undefined : name, depth + 1);
    } else copy[key] = value;
  }
  if (isNumeric(node.type)) {
    const int4 =
      scope === 'params' ||
      isIdName(name) ||
      (scope === 'querystring' && depth <= 2 && name !== undefined && filterLimit(name) === INT4_MAX);
    const limit = int4 ? INT4_MAX : Number.MAX_SAFE_INTEGER;
    if (copy.maximum === undefined && copy.exclusiveMaximum === undefined) copy.maximum = limit;
    if (copy.minimum === undefined && copy.exclusiveMinimum === undefined) copy.minimum = -limit;
    copy.finite = true;
  }
  return copy;
}

const admitsNull = (schema: SchemaNode | undefined): boolean =>
  schema !== undefined &&
  (schema.nullable === true ||
    schema.type === 'null' ||
    (Array.isArray(schema.type) && schema.type.includes('null')) ||
    (schema.anyOf?.some(admitsNull) ?? false));

/**
 * new-api's clients send `null` for an optional field they have no value for (e.g. `aff_code: null`
 * when there is no invitation), and its server reads that as absent. So do we: a `null` for a
 * property the schema declares, but not as nullable, is removed before validation, at every declared
 * depth. Free-form values (a JSON object the schema does not describe) keep their nulls: there a null
 * is data.
 */
export function dropUndeclaredNulls(data: unknown, schema: SchemaNode | undefined): void {
  if (schema === undefined) return;
  if (Array.isArray(data)) {
    for (const item of data) dropUndeclaredNulls(item, schema.items);
    return;
  }
  if (data === null || typeof data !== 'object' || schema.properties === undefined) return;
  const record = data as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    const property = schema.properties[key];
    if (property === undefined) continue;
    if (value !== null) dropUndeclaredNulls(value, property);
    else if (!admitsNull(property)) delete record[key];
  }
}

/**
 * Checks a body against the `properties` of a route schema outside Fastify's own validation (the
 * /rest dialect takes any resource's record on one route); answers the first problem, if any.
 */
export function checkProperties(data: unknown, properties: object): string | undefined {
  const schema = { type: 'object', properties } as const;
  let validate = compiledProperties.get(properties);
  if (!validate) {
    validate = strict.compile(boundNumbers(schema) as object);
    compiledProperties.set(properties, validate);
  }
  dropUndeclaredNulls(data, schema as SchemaNode);
  if (validate(data)) return undefined;
  const error = validate.errors?.[0];
  return `${error?.instancePath || 'body'} ${error?.message ?? 'is invalid'}`.trim();
}
const compiledProperties = new WeakMap<object, ValidateFunction>();

/**
 * Route schemas are compiled on their route's first request, not at start: a gateway serves a few of its
 * hundreds of routes, and every compiled validator is generated code kept for the life of the process.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const body = httpPart === 'body';
  let validate: ValidateFunction | undefined;
  // Fastify reads `errors` from the function it was given, so the wrapper carries them over.
  const check = (data: unknown) => {
    const scope: NumberScope = httpPart === 'params' || httpPart === 'querystring' ? httpPart : 'body';
    validate ??= (body ? strict : coercing).compile(boundNumbers(schema, scope) as object);
    if (body) dropUndeclaredNulls(data, schema as SchemaNode);
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  };
  check.errors = null as ValidateFunction['errors'];
  return check as ReturnType<FastifySchemaCompiler<any>>;
};

import { Ajv, type Options, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = { allErrors: false, removeAdditional: false, useDefaults: true, allowUnionTypes: true };
// Query strings and path params arrive as text, so they are coerced; JSON bodies are typed already,
// and a number where a string belongs is a client error, not something to paper over.
const coercing = new Ajv({ ...common, coerceTypes: 'array' });
const strict = new Ajv({ ...common, coerceTypes: false });

interface SchemaNode {
  type?: string | string[];
  nullable?: boolean;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
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
    validate = strict.compile(schema);
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
    validate ??= (body ? strict : coercing).compile(schema as object);
    if (body) dropUndeclaredNulls(data, schema as SchemaNode);
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  };
  check.errors = null as ValidateFunction['errors'];
  return check as ReturnType<FastifySchemaCompiler<any>>;
};

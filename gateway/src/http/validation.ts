import { Ajv, type Options, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = { allErrors: false, removeAdditional: false, useDefaults: true, allowUnionTypes: true };
// Query strings and path params arrive as text, so they are coerced; JSON bodies are typed already,
// and a number where a string belongs is a client error, not something to paper over.
const coercing = new Ajv({ ...common, coerceTypes: 'array' });
const strict = new Ajv({ ...common, coerceTypes: false });

/**
 * Checks a body against the `properties` of a route schema outside Fastify's own validation (the
 * /rest dialect takes any resource's record on one route); answers the first problem, if any.
 */
export function checkProperties(data: unknown, properties: object): string | undefined {
  let validate = compiledProperties.get(properties);
  if (!validate) {
    validate = strict.compile({ type: 'object', properties });
    compiledProperties.set(properties, validate);
  }
  if (validate(data)) return undefined;
  const error = validate.errors?.[0];
  return `${error?.instancePath || 'body'} ${error?.message ?? 'is invalid'}`.trim();
}
const compiledProperties = new WeakMap<object, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<any>>;

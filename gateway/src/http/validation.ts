import { Ajv, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const common: Options = { allErrors: false, removeAdditional: false, useDefaults: true };
// Query strings and path params arrive as text, so they are coerced; JSON bodies are typed already,
// and a number where a string belongs is a client error, not something to paper over.
const coercing = new Ajv({ ...common, coerceTypes: 'array' });
const strict = new Ajv({ ...common, coerceTypes: false });

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<any>>;

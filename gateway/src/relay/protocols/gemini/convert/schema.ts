import type { Json } from '../../../convert/types.ts';
import { asArray, isObject } from './fields.ts';

/**
 * Gemini's `Schema` is an OpenAPI 3.0 subset (upper-case types, `nullable`, string-only enums, a few
 * formats) while OpenAI tools and response formats carry JSON Schema. These translate between them;
 * keywords Gemini does not accept are dropped rather than sent to be refused.
 */

const SCALAR_KEYS = [
  'title',
  'description',
  'default',
  'example',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'propertyOrdering',
] as const;

/** Formats Gemini accepts, by type; any other makes it answer 400. */
const FORMATS: Record<string, ReadonlySet<string>> = {
  STRING: new Set(['enum', 'date-time']),
  NUMBER: new Set(['float', 'double']),
  INTEGER: new Set(['int32', 'int64']),
};

const MAX_DEPTH = 32;

/** JSON Schema → Gemini Schema. Local `$ref`s (`#/$defs/…`, `#/definitions/…`) are inlined. */
export function toGeminiSchema(schema: unknown): Json | undefined {
  if (!isObject(schema)) return undefined;
  const definitions = {
    ...(isObject(schema.definitions) ? schema.definitions : {}),
    ...(isObject(schema.$defs) ? schema.$defs : {}),
  };
  return convertToGemini(schema, definitions, 0);
}

function convertToGemini(input: Json, definitions: Json, depth: number): Json | undefined {
  if (depth > MAX_DEPTH) return undefined;
  let schema = input;
  if (typeof schema.$ref === 'string') {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : definitions[decodeURIComponent(name)];
    if (!isObject(target)) return {};
    schema = { ...target, ...withoutKey(schema, '$ref') };
  }
  const allOf = asArray(schema.allOf).filter(isObject);
  if (allOf.length > 0) {
    schema = allOf.reduce((merged: Json, part) => mergeSchemas(merged, part), withoutKey(schema, 'allOf'));
  }
  const out: Json = {};
  let types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => typeof t === 'string');
  if (types.includes('null') || schema.nullable === true) out.nullable = true;
  types = types.filter((t) => t !== 'null');
  const type = types[0]?.toUpperCase();
  if (type) out.type = type;
  for (const key of SCALAR_KEYS) if (schema[key] !== undefined) out[key] = schema[key];
  if (typeof schema.format === 'string' && type && FORMATS[type]?.has(schema.format)) out.format = schema.format;
  const enumValues = schema.const !== undefined ? [schema.const] : schema.enum;
  if (Array.isArray(enumValues) && enumValues.every((value) => typeof value === 'string')) {
    out.enum = enumValues;
    if (!out.type) out.type = 'STRING';
  }
  if (isObject(schema.properties)) {
    out.properties = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      if (isObject(property)) out.properties[name] = convertToGemini(property, definitions, depth + 1) ?? {};
    }
  }
  if (Array.isArray(schema.required)) out.required = schema.required.filter((name) => typeof name === 'string');
  const items = Array.isArray(schema.items) ? schema.items[0] : schema.items;
  if (isObject(items)) out.items = convertToGemini(items, definitions, depth + 1) ?? {};
  const anyOf = asArray(schema.anyOf ?? schema.oneOf).filter(isObject);
  if (anyOf.length > 0) out.anyOf = anyOf.map((option) => convertToGemini(option, definitions, depth + 1) ?? {});
  // JSON Schema may leave the type implied by the keywords; Gemini wants it said.
  if (!out.type && out.properties) out.type = 'OBJECT';
  else if (!out.type && out.items) out.type = 'ARRAY';
  return out;
}

function mergeSchemas(a: Json, b: Json): Json {
  const merged: Json = { ...a, ...b };
  if (isObject(a.properties) || isObject(b.properties)) merged.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) || Array.isArray(b.required))
    merged.required = [...new Set([...asArray(a.required), ...asArray(b.required)])];
  return merged;
}

function withoutKey(object: Json, key: string): Json {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}

/** Gemini Schema → JSON Schema: lower-case types, `nullable` as a `null` type. */
export function fromGeminiSchema(schema: unknown, depth = 0): Json | undefined {
  if (!isObject(schema) || depth > MAX_DEPTH) return undefined;
  const out: Json = {};
  const type =
    typeof schema.type === 'string' && schema.type !== 'TYPE_UNSPECIFIED' ? schema.type.toLowerCase() : undefined;
  if (type) out.type = schema.nullable === true ? [type, 'null'] : type;
  for (const key of SCALAR_KEYS) {
    if (key !== 'propertyOrdering' && key !== 'example' && schema[key] !== undefined) out[key] = schema[key];
  }
  if (typeof schema.format === 'string' && schema.format !== 'enum') out.format = schema.format;
  if (Array.isArray(schema.enum)) out.enum = schema.enum;
  if (isObject(schema.properties)) {
    out.properties = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      out.properties[name] = fromGeminiSchema(property, depth + 1) ?? {};
    }
  }
  if (Array.isArray(schema.required)) out.required = schema.required;
  if (isObject(schema.items)) out.items = fromGeminiSchema(schema.items, depth + 1) ?? {};
  if (Array.isArray(schema.anyOf)) out.anyOf = schema.anyOf.map((option) => fromGeminiSchema(option, depth + 1) ?? {});
  return out;
}

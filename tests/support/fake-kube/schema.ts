import { applyDefaults, celErrors, type JsonSchema, schemaErrors } from '../crd-schemas.ts';
import { errors } from './errors.ts';
import { isPlainObject } from './patch.ts';
import type { ResourceType } from './resources.ts';
import type { KubeObject } from './store.ts';

/**
 * What kube-apiserver does with a custom resource body against its CRD's structural schema: pruning of
 * unknown fields (and of nulls where the schema does not allow them), defaulting, then OpenAPI and CEL
 * validation of the result.
 */

/** The `fieldValidation` query parameter: what to do about unknown fields (Warn is the server's default). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/**
 * Drops every field the schema does not declare (objects with `properties` and no
 * `x-kubernetes-preserve-unknown-fields`), and null values of non-nullable fields. `apiVersion`, `kind` and
 * `metadata` at the root are the server's own and are left alone. Returns the paths of the unknown fields.
 */
export function prune(schema: JsonSchema, object: Record<string, unknown>): string[] {
  const unknown: string[] = [];
  pruneObject(schema, object, '', unknown, true);
  return unknown;
}

function pruneValue(schema: JsonSchema, value: unknown, path: string, unknown: string[]): void {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) for (const [index, item] of value.entries()) pruneValue(items, item, `${path}[${index}]`, unknown);
  } else if (isPlainObject(value)) {
    pruneObject(schema, value, path, unknown, false);
  }
}

function pruneObject(
  schema: JsonSchema,
  object: Record<string, unknown>,
  path: string,
  unknown: string[],
  root: boolean,
): void {
  const embedded = root || schema['x-kubernetes-embedded-resource'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const additional = isPlainObject(schema.additionalProperties)
    ? (schema.additionalProperties as JsonSchema)
    : undefined;
  for (const key of Object.keys(object)) {
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const field = path === '' ? key : `${path}.${key}`;
    const property = schema.properties?.[key] ?? additional;
    if (!property) {
      if (!preserve && schema.additionalProperties !== true) {
        unknown.push(field);
        delete object[key];
      }
      continue;
    }
    if (object[key] === null && !property.nullable) {
      delete object[key];
      continue;
    }
    pruneValue(property, object[key], additional && !schema.properties?.[key] ? `${path}[${key}]` : field, unknown);
  }
}

/**
 * Decodes a custom resource body as kube-apiserver does: a pruned and defaulted copy, and deals with the
 * unknown fields as `fieldValidation` says — `Strict` is a 400, `Warn` adds one warning per field.
 */
export function decodeCustomResource(
  type: ResourceType,
  schema: JsonSchema,
  object: KubeObject,
  fieldValidation: FieldValidation,
  warnings: string[] | undefined,
): KubeObject {
  const copy = structuredClone(object);
  const unknown = prune(schema, copy);
  if (unknown.length > 0 && fieldValidation === 'Strict') {
    const list = unknown.map((field) => `unknown field "${field}"`).join(', ');
    throw errors.badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${list}`,
    );
  }
  if (fieldValidation === 'Warn') for (const field of unknown) warnings?.push(`unknown field "${field}"`);
  return applyDefaults(schema, copy);
}

/** The OpenAPI and CEL (x-kubernetes-validations) errors of a decoded custom resource. */
export function schemaProblems(schema: JsonSchema, object: KubeObject): string[] {
  return [...schemaErrors(schema, object), ...celErrors(schema, object)];
}

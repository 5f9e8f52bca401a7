/**
 * The Tollgate CustomResourceDefinitions (crds/*.yaml) as an API server would apply them, for tests:
 * structural defaulting, OpenAPI validation (ajv, unknown fields rejected as with kubectl's strict field
 * validation), list-type checks and the x-kubernetes-validations CEL rules (@marcbachmann/cel-js, `self`
 * being the value at the rule's schema level). Also checks on the CRDs themselves: structural schemas with
 * every string, list and map bounded, rules that compile, printer columns that name existing fields.
 *
 * Used by tests/k8s/crds.test.ts, the Helm chart tests and the fake API server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Environment } from '@marcbachmann/cel-js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parseAllDocuments } from 'yaml';

export const CRD_DIR = resolve(import.meta.dirname, '../../crds');

/** An apiextensions.k8s.io/v1 ValidationRule. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
  optionalOldSelf?: boolean;
}

/** The JSONSchemaProps keywords a structural CRD schema may use. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  default?: unknown;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
  [keyword: string]: unknown;
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: object; scale?: object };
  additionalPrinterColumns?: PrinterColumn[];
  schema: { openAPIV3Schema: JsonSchema };
}

export interface CustomResourceDefinition {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: CrdVersion[];
  };
}

/** One CRD file, with what tests look up most. */
export interface LoadedCrd {
  file: string;
  definition: CustomResourceDefinition;
  group: string;
  /** The storage version. */
  version: string;
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The storage version's openAPIV3Schema. */
  schema: JsonSchema;
  printerColumns: PrinterColumn[];
}

const loaded = new Map<string, LoadedCrd[]>();

/** Every CRD in a folder (default crds/), sorted by kind; read once per folder. */
export function loadCrds(dir: string = CRD_DIR): LoadedCrd[] {
  const cached = loaded.get(dir);
  if (cached) return cached;
  const crds: LoadedCrd[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))) {
    for (const document of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      const definition = document.toJS() as CustomResourceDefinition | null;
      if (definition?.kind !== 'CustomResourceDefinition') continue;
      const storage = definition.spec.versions.find((version) => version.storage);
      if (!storage) throw new Error(`${file}: no storage version`);
      crds.push({
        file: join(dir, file),
        definition,
        group: definition.spec.group,
        version: storage.name,
        apiVersion: `${definition.spec.group}/${storage.name}`,
        kind: definition.spec.names.kind,
        plural: definition.spec.names.plural,
        namespaced: definition.spec.scope === 'Namespaced',
        schema: storage.schema.openAPIV3Schema,
        printerColumns: storage.additionalPrinterColumns ?? [],
      });
    }
  }
  crds.sort((a, b) => a.kind.localeCompare(b.kind));
  loaded.set(dir, crds);
  return crds;
}

/** The CRD serving an apiVersion and kind (any served version of the group), if any. */
export function findCrd(apiVersion: string, kind: string, crds: LoadedCrd[] = loadCrds()): LoadedCrd | undefined {
  return crds.find(
    (crd) =>
      crd.kind === kind &&
      crd.definition.spec.versions.some((version) => version.served && `${crd.group}/${version.name}` === apiVersion),
  );
}

// --- Defaulting ---------------------------------------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Structural defaulting as the API server does it: a missing property (or a null one that is not nullable)
 * with a default gets the default, and defaults apply inside existing objects, list items and map values
 * (and inside the defaults themselves). Returns a defaulted copy.
 */
export function applyDefaults<T>(schema: JsonSchema, value: T): T {
  return defaultValue(schema, structuredClone(value)) as T;
}

function defaultValue(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    return schema.items ? value.map((item) => defaultValue(schema.items!, item)) : value;
  }
  if (!isObject(value)) return value;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const current = value[key];
    if ((current === undefined || (current === null && !property.nullable)) && property.default !== undefined) {
      value[key] = structuredClone(property.default);
    }
    if (value[key] !== undefined) value[key] = defaultValue(property, value[key]);
  }
  if (isObject(schema.additionalProperties)) {
    for (const key of Object.keys(value)) value[key] = defaultValue(schema.additionalProperties, value[key]);
  }
  return value;
}

/** A custom resource with its CRD's defaults applied (a copy); unknown kinds come back unchanged. */
export function defaultCustomResource<T extends object>(resource: T, crds: LoadedCrd[] = loadCrds()): T {
  const { apiVersion, kind } = resource as { apiVersion?: unknown; kind?: unknown };
  const crd = typeof apiVersion === 'string' && typeof kind === 'string' ? findCrd(apiVersion, kind, crds) : undefined;
  return crd ? applyDefaults(crd.schema, resource) : structuredClone(resource);
}

// --- OpenAPI validation (ajv) -------------------------------------------------------------------------------

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('date-time', { validate: (text: string) => RFC3339.test(text) && !Number.isNaN(Date.parse(text)) });
for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'password']) ajv.addFormat(format, true);

const SCHEMA_KEYWORDS = [
  'type',
  'format',
  'enum',
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'required',
] as const;

/**
 * The JSON Schema ajv checks for a CRD schema: objects with properties reject unknown fields (unless they
 * preserve them), list-type set means unique items, OpenAPI's boolean exclusive bounds become JSON Schema's.
 * `metadata` at the root is left open (the API server checks it itself).
 */
export function toAjvSchema(schema: JsonSchema, root = true): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const keyword of SCHEMA_KEYWORDS) if (schema[keyword] !== undefined) out[keyword] = schema[keyword];
  if (schema.exclusiveMinimum === true && schema.minimum !== undefined) {
    delete out.minimum;
    out.exclusiveMinimum = schema.minimum;
  }
  if (schema.exclusiveMaximum === true && schema.maximum !== undefined) {
    delete out.maximum;
    out.exclusiveMaximum = schema.maximum;
  }
  if (schema['x-kubernetes-int-or-string']) {
    delete out.type;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (schema.nullable && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (schema['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (schema.items) out.items = toAjvSchema(schema.items, false);
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, property]) => [
        key,
        root && key === 'metadata' ? { type: 'object' } : toAjvSchema(property, false),
      ]),
    );
  }
  if (isObject(schema.additionalProperties)) {
    out.additionalProperties = toAjvSchema(schema.additionalProperties as JsonSchema, false);
  } else if (schema.type === 'object' && !schema['x-kubernetes-preserve-unknown-fields'] && schema.properties) {
    out.additionalProperties = false;
  }
  return out;
}

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(toAjvSchema(schema));
    compiled.set(schema, validate);
  }
  return validate;
}

/** A field path the way the API server prints it: spec.models[0], spec.modelMapping[gpt-4o]. */
function fieldPath(value: unknown, pointer: string): string {
  let path = '';
  let current = value;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      path += `[${segment}]`;
      current = current[Number(segment)];
    } else {
      path += path === '' ? segment : `.${segment}`;
      current = isObject(current) ? current[segment] : undefined;
    }
  }
  return path;
}

const join2 = (path: string, field: string) => (path === '' ? field : `${path}.${field}`);

function describeError(error: ErrorObject, value: unknown): string {
  const path = fieldPath(value, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join2(path, String(params.missingProperty))}: Required value`;
    case 'additionalProperties':
      return `${join2(path, String(params.additionalProperty))}: unknown field`;
    case 'enum':
      return `${path}: Unsupported value: supported values: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${path || '<root>'}: ${error.message ?? error.keyword}`;
  }
}

/** OpenAPI errors of a value against a CRD schema (no defaulting, no CEL). */
export function schemaErrors(schema: JsonSchema, value: unknown): string[] {
  const validate = compile(schema);
  const errors = validate(value) ? [] : (validate.errors ?? []).map((error) => describeError(error, value));
  return [...new Set([...errors, ...listMapErrors(schema, value, '')])];
}

/** Items of an x-kubernetes-list-type: map list must differ in their keys. */
function listMapErrors(schema: JsonSchema, value: unknown, path: string): string[] {
  const errors: string[] = [];
  if (Array.isArray(value) && schema.items) {
    if (schema['x-kubernetes-list-type'] === 'map') {
      const keys = schema['x-kubernetes-list-map-keys'] ?? [];
      const seen = new Set<string>();
      for (const [index, item] of value.entries()) {
        const key = JSON.stringify(keys.map((name) => (isObject(item) ? item[name] : undefined)));
        if (seen.has(key)) errors.push(`${path}[${index}]: Duplicate value: ${key}`);
        seen.add(key);
      }
    }
    for (const [index, item] of value.entries()) errors.push(...listMapErrors(schema.items, item, `${path}[${index}]`));
  } else if (isObject(value)) {
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      errors.push(...listMapErrors(property, value[key], join2(path, key)));
    }
    if (isObject(schema.additionalProperties)) {
      for (const [key, item] of Object.entries(value)) {
        errors.push(...listMapErrors(schema.additionalProperties as JsonSchema, item, `${path}[${key}]`));
      }
    }
  }
  return errors;
}

// --- CEL (x-kubernetes-validations) -------------------------------------------------------------------------

const cel = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false })
  .registerVariable('self', 'dyn')
  .registerVariable('oldSelf', 'dyn');
const parsedRules = new Map<string, ReturnType<Environment['parse']>>();

function parseRule(rule: string) {
  let parsed = parsedRules.get(rule);
  if (!parsed) {
    parsed = cel.parse(rule);
    parsedRules.set(rule, parsed);
  }
  return parsed;
}

/** Whether a rule is a transition rule (compares with the previous object, so runs on updates only). */
const usesOldSelf = (rule: string) => /\boldSelf\b/.test(rule);

/**
 * A value as the API server hands it to CEL: integers as int (BigInt), date-time strings as timestamps,
 * numbers as double, and at the root only metadata.name and metadata.generateName.
 */
export function toCelValue(schema: JsonSchema | undefined, value: unknown, root = false): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string') {
    return schema?.format === 'date-time' && RFC3339.test(value) ? new Date(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => toCelValue(schema?.items, item));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (root && key === 'metadata' && isObject(item)) {
      out.metadata = Object.fromEntries(
        Object.entries(item).filter(([name]) => name === 'name' || name === 'generateName'),
      );
      continue;
    }
    const property =
      schema?.properties?.[key] ?? (isObject(schema?.additionalProperties) ? schema.additionalProperties : undefined);
    out[key] = toCelValue(property as JsonSchema | undefined, item);
  }
  return out;
}

/** Every x-kubernetes-validations rule in a schema, with the path of the schema level it is attached to. */
export function celRules(schema: JsonSchema, path = ''): { path: string; rule: ValidationRule }[] {
  const found = (schema['x-kubernetes-validations'] ?? []).map((rule) => ({ path: path || '<root>', rule }));
  for (const [key, property] of Object.entries(schema.properties ?? {}))
    found.push(...celRules(property, join2(path, key)));
  if (isObject(schema.additionalProperties)) {
    found.push(...celRules(schema.additionalProperties as JsonSchema, `${path}[*]`));
  }
  if (schema.items) found.push(...celRules(schema.items, `${path}[*]`));
  return found;
}

/**
 * The CEL errors of a value: every rule whose schema level is present in the value is evaluated with
 * `self` bound to that level. Transition rules (oldSelf) are skipped: there is no previous object.
 */
export function celErrors(schema: JsonSchema, value: unknown, path = '', root = true): string[] {
  if (value === undefined || value === null) return [];
  const errors: string[] = [];
  const rules = schema['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    const self = toCelValue(schema, value, root);
    for (const rule of rules) {
      if (usesOldSelf(rule.rule)) continue;
      const at = `${path}${rule.fieldPath ?? ''}`.replace(/^\./, '') || '<root>';
      let result: unknown;
      try {
        result = parseRule(rule.rule)({ self });
      } catch (error) {
        errors.push(`${at}: Invalid value: rule "${rule.rule}" failed to evaluate: ${(error as Error).message}`);
        continue;
      }
      if (result === true) continue;
      let message = rule.message ?? `failed rule: ${rule.rule}`;
      if (rule.messageExpression) {
        try {
          const computed = parseRule(rule.messageExpression)({ self });
          if (typeof computed === 'string' && computed !== '') message = computed;
        } catch {
          // The API server falls back to message when messageExpression fails.
        }
      }
      errors.push(`${at}: Invalid value: ${message}`);
    }
  }
  if (Array.isArray(value) && schema.items) {
    for (const [index, item] of value.entries()) {
      errors.push(...celErrors(schema.items, item, `${path}[${index}]`, false));
    }
  } else if (isObject(value)) {
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      errors.push(...celErrors(property, value[key], join2(path, key), false));
    }
    if (isObject(schema.additionalProperties)) {
      for (const [key, item] of Object.entries(value)) {
        errors.push(...celErrors(schema.additionalProperties as JsonSchema, item, `${path}[${key}]`, false));
      }
    }
  }
  return errors;
}

// --- Whole resources ----------------------------------------------------------------------------------------

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export interface ValidateOptions {
  crds?: LoadedCrd[];
  /** Apply the CRD's defaults first, as the API server does (default true). */
  defaults?: boolean;
}

/**
 * What the API server would answer for a create of this custom resource: [] when it is accepted, else
 * one message per problem ("spec.baseURL: Invalid value: ..."). Checks the kind is known, the name, the
 * OpenAPI schema after defaulting (unknown fields rejected), list-type constraints and the CEL rules.
 */
export function validateCustomResource(resource: unknown, options: ValidateOptions = {}): string[] {
  if (!isObject(resource)) return ['<root>: must be an object'];
  const { apiVersion, kind, metadata } = resource;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['<root>: apiVersion and kind are required'];
  const crd = findCrd(apiVersion, kind, options.crds ?? loadCrds());
  if (!crd) return [`<root>: no CustomResourceDefinition serves ${kind} in ${apiVersion}`];
  const errors: string[] = [];
  const name = isObject(metadata) ? metadata.name : undefined;
  if (!isObject(metadata) || (typeof name !== 'string' && typeof metadata.generateName !== 'string')) {
    errors.push('metadata.name: Required value');
  } else if (typeof name === 'string' && (name.length > 253 || !DNS_SUBDOMAIN.test(name))) {
    errors.push(`metadata.name: Invalid value: "${name}": must be a lowercase RFC 1123 subdomain`);
  }
  const value = options.defaults === false ? resource : applyDefaults(crd.schema, resource);
  errors.push(...schemaErrors(crd.schema, value), ...celErrors(crd.schema, value));
  return errors;
}

// --- Checks on the CRDs themselves --------------------------------------------------------------------------

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const GENERICS = ['allOf', 'anyOf', 'oneOf', 'not', '$ref', 'definitions', 'patternProperties', 'dependencies'];

/**
 * Why a schema is not structural, or not cheap enough for CEL: every node has a type (or preserves unknown
 * fields), every object has properties, additionalProperties or x-kubernetes-preserve-unknown-fields (not
 * both properties and additionalProperties), every string has maxLength, every list items and maxItems,
 * every map maxProperties; required names exist; list-map keys are required item fields; defaults validate;
 * rule messages are single lines. Root metadata may only be `type: object`.
 */
export function structuralProblems(schema: JsonSchema, path = ''): string[] {
  const at = path || '<root>';
  const problems: string[] = [];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!schema.type && !preserve && !schema['x-kubernetes-int-or-string']) problems.push(`${at}: no type`);
  if (schema.type && !TYPES.has(schema.type)) problems.push(`${at}: unknown type ${schema.type}`);
  for (const keyword of GENERICS) {
    if (schema[keyword] !== undefined) problems.push(`${at}: ${keyword} is not used in Tollgate's schemas`);
  }
  if (path === '') {
    if (schema.type !== 'object') problems.push('<root>: must be an object');
    if (schema.additionalProperties !== undefined) problems.push('<root>: additionalProperties is not allowed');
    const metadata = schema.properties?.metadata;
    if (metadata && (metadata.type !== 'object' || Object.keys(metadata).some((k) => k !== 'type'))) {
      problems.push('metadata: may only be `type: object`');
    }
  }
  switch (schema.type) {
    case 'object': {
      const map = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
      if (schema.properties && map) problems.push(`${at}: both properties and additionalProperties`);
      if (!schema.properties && !map && !preserve && !(path === 'metadata')) {
        problems.push(`${at}: object without properties, additionalProperties or preserve-unknown-fields`);
      }
      if ((map || (preserve && !schema.properties)) && schema.maxProperties === undefined) {
        problems.push(`${at}: map without maxProperties`);
      }
      if (schema.additionalProperties === true) problems.push(`${at}: additionalProperties must be a schema`);
      for (const name of schema.required ?? []) {
        if (!schema.properties?.[name]) problems.push(`${at}: required field ${name} is not a property`);
      }
      break;
    }
    case 'array':
      if (!schema.items) problems.push(`${at}: array without items`);
      if (schema.maxItems === undefined) problems.push(`${at}: array without maxItems`);
      if (schema['x-kubernetes-list-type'] === 'map') {
        for (const key of schema['x-kubernetes-list-map-keys'] ?? []) {
          const field = schema.items?.properties?.[key];
          if (!field) problems.push(`${at}: list-map key ${key} is not an item field`);
          else if (!schema.items?.required?.includes(key) && field.default === undefined) {
            problems.push(`${at}: list-map key ${key} must be required or defaulted`);
          }
        }
        if (!schema['x-kubernetes-list-map-keys']?.length) problems.push(`${at}: list-type map without keys`);
      }
      if (schema['x-kubernetes-list-type'] === 'set' && schema.items?.type === 'object') {
        problems.push(`${at}: list-type set of objects`);
      }
      break;
    case 'string':
      if (schema.maxLength === undefined) problems.push(`${at}: string without maxLength`);
      break;
  }
  if (schema.default !== undefined) {
    const errors = schemaErrors(schema, schema.default);
    if (errors.length > 0) problems.push(`${at}: default does not validate: ${errors.join('; ')}`);
  }
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (!rule.rule?.trim()) problems.push(`${at}: empty rule`);
    if (rule.message?.includes('\n')) problems.push(`${at}: rule message with a line break`);
    if (rule.rule?.includes('\n') && !rule.message) problems.push(`${at}: multi-line rule without a message`);
    if (rule.fieldPath && !resolveFieldPath(schema, rule.fieldPath)) {
      problems.push(`${at}: rule fieldPath ${rule.fieldPath} names no field`);
    }
  }
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    problems.push(...structuralProblems(property, join2(path, key)));
  }
  if (isObject(schema.additionalProperties)) {
    problems.push(...structuralProblems(schema.additionalProperties as JsonSchema, `${path}[*]`));
  }
  if (schema.items) problems.push(...structuralProblems(schema.items, `${path}[*]`));
  return problems;
}

function resolveFieldPath(schema: JsonSchema, fieldPath: string): JsonSchema | undefined {
  let current: JsonSchema | undefined = schema;
  for (const segment of fieldPath.replace(/^\./, '').split('.')) current = current?.properties?.[segment];
  return current;
}

/** Rules that do not parse or type-check (self and oldSelf dynamic). */
export function celRuleProblems(schema: JsonSchema): string[] {
  const problems: string[] = [];
  for (const { path, rule } of celRules(schema)) {
    for (const expression of [rule.rule, rule.messageExpression]) {
      if (expression === undefined) continue;
      try {
        const result = cel.check(expression);
        if (!result.valid) problems.push(`${path}: ${expression}: ${result.error?.message.split('\n')[0]}`);
      } catch (error) {
        problems.push(`${path}: ${expression}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }
  return problems;
}

const OBJECT_META_FIELDS: Record<string, string> = {
  name: 'string',
  namespace: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'integer',
  creationTimestamp: 'date',
  deletionTimestamp: 'date',
  labels: 'map',
  annotations: 'map',
};
const COLUMN_TYPES = new Set(['integer', 'number', 'string', 'boolean', 'date']);

/**
 * Why printer columns would print nothing or the wrong thing: a JSONPath through fields the schema does not
 * have (filters included), a column type that does not match the field, duplicate names.
 */
export function printerColumnProblems(crd: LoadedCrd): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const column of crd.printerColumns) {
    const at = `${crd.kind} column ${column.name}`;
    if (names.has(column.name)) problems.push(`${at}: duplicate name`);
    names.add(column.name);
    if (!COLUMN_TYPES.has(column.type)) problems.push(`${at}: unknown type ${column.type}`);
    const found = columnField(crd.schema, column.jsonPath);
    if (typeof found === 'string') {
      problems.push(`${at}: ${found}`);
      continue;
    }
    const fieldType = found.type;
    const matches =
      column.type === fieldType ||
      (column.type === 'number' && fieldType === 'integer') ||
      (column.type === 'date' && fieldType === 'string' && found.format === 'date-time');
    if (!matches) problems.push(`${at}: column type ${column.type} but ${column.jsonPath} is ${fieldType}`);
  }
  return problems;
}

/** The schema a printer column's JSONPath ends at (its type as a column type), or why it names no field. */
function columnField(schema: JsonSchema, jsonPath: string): { type: string; format?: string } | string {
  const segment = /\.([A-Za-z0-9_-]+)((?:\[[^\]]*\])*)/y;
  let current: JsonSchema | undefined = schema;
  let position = 0;
  let first = true;
  while (position < jsonPath.length) {
    segment.lastIndex = position;
    const match = segment.exec(jsonPath);
    if (!match) return `cannot parse JSONPath ${jsonPath} at ${position}`;
    position = segment.lastIndex;
    const [, field, brackets] = match;
    if (first && field === 'metadata') {
      const rest = jsonPath.slice(position);
      const name = rest.replace(/^\./, '');
      const type = OBJECT_META_FIELDS[name];
      if (!type) return `metadata field ${name} is not shown by kubectl`;
      return type === 'date' ? { type: 'string', format: 'date-time' } : { type };
    }
    first = false;
    current = current?.properties?.[field!];
    if (!current) return `${jsonPath}: no field ${field}`;
    for (const bracket of brackets!.match(/\[[^\]]*\]/g) ?? []) {
      if (current.type !== 'array' || !current.items) return `${jsonPath}: ${field} is not a list`;
      current = current.items;
      const filter = /^\[\?\(@\.([A-Za-z0-9_]+)\s*==\s*"[^"]*"\)\]$/.exec(bracket);
      if (filter && !current.properties?.[filter[1]!]) return `${jsonPath}: list items have no field ${filter[1]}`;
      if (!filter && bracket !== '[*]' && !/^\[\d+\]$/.test(bracket)) return `${jsonPath}: unsupported ${bracket}`;
    }
  }
  if (!current?.type) return `${jsonPath}: names no typed field`;
  if (current.type === 'array' || current.type === 'object') return `${jsonPath}: ends at a ${current.type}`;
  return { type: current.type, ...(current.format ? { format: current.format } : {}) };
}

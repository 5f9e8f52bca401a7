/**
 * The patch formats the API server accepts, applied to plain JSON values: JSON merge patch (RFC 7386) and JSON patch
 * (RFC 6902). Strategic merge patch and server-side apply are mapped onto merge patch by the store (see README).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A patch that cannot be applied: the store answers 422 (or 400 for a malformed document). */
export class PatchError extends Error {
  readonly malformed: boolean;

  constructor(message: string, malformed = false) {
    super(message);
    this.malformed = malformed;
  }
}

export function isPlainObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386: objects merge key by key, `null` removes a key, anything else (arrays included) replaces. */
export function mergePatch(target: unknown, patch: unknown): any {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, any> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: unknown): string[] {
  if (typeof pointer !== 'string') throw new PatchError('path must be a string');
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(array: unknown[], token: string, forAdd: boolean): number {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`invalid array index "${token}"`);
  const index = Number(token);
  if (index > array.length || (!forAdd && index === array.length)) {
    throw new PatchError(`array index ${index} out of bounds`);
  }
  return index;
}

/** Walks to the parent of the pointer's last token; every step must exist. */
function parentOf(doc: any, tokens: string[], pointer: string): { parent: any; last: string } {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[arrayIndex(node, token, false)];
    else if (isPlainObject(node) && Object.hasOwn(node, token)) node = node[token];
    else throw new PatchError(`path "${pointer}" does not exist`);
  }
  if (!Array.isArray(node) && !isPlainObject(node)) throw new PatchError(`path "${pointer}" does not exist`);
  return { parent: node, last: tokens[tokens.length - 1]! };
}

function getAt(doc: any, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return doc;
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false)];
  if (!Object.hasOwn(parent, last)) throw new PatchError(`path "${pointer}" does not exist`);
  return parent[last];
}

function removeAt(doc: any, pointer: string): { doc: any; removed: unknown } {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError('cannot remove the whole document');
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, false), 1);
    return { doc, removed };
  }
  if (!Object.hasOwn(parent, last)) throw new PatchError(`path "${pointer}" does not exist`);
  const removed = parent[last];
  delete parent[last];
  return { doc, removed };
}

function addAt(doc: any, pointer: string, value: unknown): any {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, last } = parentOf(doc, tokens, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, structuredClone(value));
  else parent[last] = structuredClone(value);
  return doc;
}

/** RFC 6902: add, remove, replace, move, copy, test, applied in order to a copy of `target`. */
export function jsonPatch(target: unknown, operations: unknown): any {
  if (!Array.isArray(operations)) throw new PatchError('a JSON patch must be an array of operations', true);
  let doc: any = structuredClone(target);
  for (const raw of operations as Operation[]) {
    if (!isPlainObject(raw)) throw new PatchError('a JSON patch operation must be an object', true);
    switch (raw.op) {
      case 'add':
        if (!('value' in raw)) throw new PatchError('add operation does not contain a value');
        doc = addAt(doc, raw.path, raw.value);
        break;
      case 'remove':
        doc = removeAt(doc, raw.path).doc;
        break;
      case 'replace':
        if (!('value' in raw)) throw new PatchError('replace operation does not contain a value');
        getAt(doc, raw.path);
        if (parsePointer(raw.path).length === 0) doc = structuredClone(raw.value);
        else doc = addAt(removeAt(doc, raw.path).doc, raw.path, raw.value);
        break;
      case 'move': {
        if (typeof raw.from !== 'string') throw new PatchError('move operation does not contain a from path');
        if (raw.path !== raw.from && raw.path.startsWith(`${raw.from}/`)) {
          throw new PatchError('cannot move a value into one of its own children');
        }
        const { doc: without, removed } = removeAt(doc, raw.from);
        doc = addAt(without, raw.path, removed);
        break;
      }
      case 'copy':
        if (typeof raw.from !== 'string') throw new PatchError('copy operation does not contain a from path');
        doc = addAt(doc, raw.path, getAt(doc, raw.from));
        break;
      case 'test':
        if (!deepEqual(getAt(doc, raw.path), raw.value)) {
          throw new PatchError(`testing value ${raw.path} failed: test failed`);
        }
        break;
      default:
        throw new PatchError(`Unexpected kind: ${String(raw.op)}`);
    }
  }
  return doc;
}

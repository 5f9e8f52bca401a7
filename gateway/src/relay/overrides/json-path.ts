/**
 * The gjson-style paths of param_override (reference §4.6): keys separated by dots (`\.` is a
 * literal dot), array indexes as numbers, negative indexes counted from the end (`messages.-1`),
 * and `*` for every key or element. Parsed once per channel setting, walked per request.
 */

export interface Segment {
  readonly key: string;
  /** The segment as an array index (may be negative), when it is an integer. */
  readonly index: number | undefined;
  readonly wild: boolean;
}

export interface JsonPath {
  readonly text: string;
  readonly segments: readonly Segment[];
  readonly wild: boolean;
}

/** A concrete location: object keys and resolved, non-negative array indexes (-1 = append). */
export type Location = Array<string | number>;

/** Marks "nothing at this path" (undefined and null are values a body can hold). */
export const MISSING: unique symbol = Symbol('missing');

export function parsePath(text: string): JsonPath {
  const segments: Segment[] = [];
  let key = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      key += text[++i];
    } else if (c === '.') {
      segments.push(segment(key));
      key = '';
    } else {
      key += c;
    }
  }
  segments.push(segment(key));
  return { text, segments, wild: segments.some((s) => s.wild) };
}

function segment(key: string): Segment {
  return { key, index: /^-?\d+$/.test(key) ? Number(key) : undefined, wild: key === '*' };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The child under one segment, negative indexes counted from the end; MISSING when absent. */
export function child(node: unknown, segment: Segment): unknown {
  if (Array.isArray(node)) {
    if (segment.index === undefined) return MISSING;
    const index = segment.index < 0 ? node.length + segment.index : segment.index;
    return index >= 0 && index < node.length ? node[index] : MISSING;
  }
  if (isObject(node)) return Object.hasOwn(node, segment.key) ? node[segment.key] : MISSING;
  return MISSING;
}

/** The value at a path from `node` (`*` taken literally), or MISSING. */
export function read(node: unknown, path: JsonPath): unknown {
  let current = node;
  for (const segment of path.segments) {
    current = child(current, segment);
    if (current === MISSING) return MISSING;
  }
  return current;
}

/** The value at a concrete location, or MISSING. */
export function readAt(node: unknown, location: Location): unknown {
  let current = node;
  for (const key of location) {
    current = at(current, key);
    if (current === MISSING) return MISSING;
  }
  return current;
}

function at(node: unknown, key: string | number): unknown {
  if (Array.isArray(node)) return typeof key === 'number' && key >= 0 && key < node.length ? node[key] : MISSING;
  if (isObject(node)) {
    const name = String(key);
    return Object.hasOwn(node, name) ? node[name] : MISSING;
  }
  return MISSING;
}

/**
 * The concrete locations a path names in `root`. Without `*`: exactly one, negative indexes
 * resolved where the array has that element (an out-of-range -1 stays -1: "append", as sjson
 * does), and missing parts kept so that `set` can create them. With `*`: every existing match,
 * object keys in name order; the last segment may name a key that does not exist yet.
 */
export function locate(root: unknown, path: JsonPath): Location[] {
  if (!path.wild) return [concrete(root, path.segments)];
  const found: Location[] = [];
  expand(root, path.segments, 0, [], found);
  return found;
}

function concrete(root: unknown, segments: readonly Segment[]): Location {
  const location: Location = [];
  let current: unknown = root;
  for (const segment of segments) {
    if (Array.isArray(current) && segment.index !== undefined) {
      const index = segment.index < 0 ? current.length + segment.index : segment.index;
      const inRange = index >= 0 && index < current.length;
      location.push(inRange ? index : segment.index);
      current = inRange ? current[index] : MISSING;
    } else if (isObject(current)) {
      location.push(segment.key);
      current = Object.hasOwn(current, segment.key) ? current[segment.key] : MISSING;
    } else {
      // Nothing here yet: an index creates an array, a name an object.
      location.push(segment.index !== undefined && segment.index >= -1 ? segment.index : segment.key);
      current = MISSING;
    }
  }
  return location;
}

function expand(node: unknown, segments: readonly Segment[], at: number, prefix: Location, found: Location[]): void {
  if (at === segments.length) {
    found.push(prefix);
    return;
  }
  const segment = segments[at]!;
  const last = at === segments.length - 1;
  if (segment.wild) {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) expand(node[i], segments, at + 1, [...prefix, i], found);
    } else if (isObject(node)) {
      for (const key of Object.keys(node).sort()) expand(node[key], segments, at + 1, [...prefix, key], found);
    }
    return;
  }
  if (Array.isArray(node)) {
    if (segment.index === undefined) return;
    const index = segment.index < 0 ? node.length + segment.index : segment.index;
    if (index < 0 || index >= node.length) return;
    expand(node[index], segments, at + 1, [...prefix, index], found);
  } else if (isObject(node)) {
    if (last) found.push([...prefix, segment.key]);
    else if (Object.hasOwn(node, segment.key))
      expand(node[segment.key], segments, at + 1, [...prefix, segment.key], found);
  }
}

/**
 * Copy-on-write edits of a JSON document: the input is never modified; containers on the way to
 * an edit are copied once per draft, everything else is shared with the input. So one parsed
 * request body serves every retry, and an override costs what it touches, not the body's size.
 */
export class Draft {
  root: unknown;
  #owned: Set<object> | undefined;

  constructor(root: unknown) {
    this.root = root;
  }

  /**
   * Sets the value, creating missing containers and replacing scalars (null included) in the way,
   * as sjson does; false when the location names an array element by a key, or the root is a scalar.
   */
  set(location: Location, value: unknown): boolean {
    if (location.length === 0) {
      this.root = value;
      return true;
    }
    if (!isContainer(this.root)) return false;
    let parent = this.#own(this.root);
    this.root = parent;
    for (let i = 0; i < location.length - 1; i++) {
      const key = location[i]!;
      const current = at(parent, key);
      const next = isContainer(current)
        ? this.#own(current)
        : this.#fresh(typeof location[i + 1] === 'number' ? [] : {});
      if (!assign(parent, key, next)) return false;
      parent = next;
    }
    return assign(parent, location[location.length - 1]!, value);
  }

  /** Removes the value (an array element is spliced out); false when there was none. */
  delete(location: Location): boolean {
    if (location.length === 0 || readAt(this.root, location) === MISSING) return false;
    let parent = this.#own(this.root as object);
    this.root = parent;
    for (let i = 0; i < location.length - 1; i++) {
      const key = location[i]!;
      const next = this.#own(at(parent, key) as object);
      assign(parent, key, next);
      parent = next;
    }
    const last = location[location.length - 1]!;
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete (parent as Record<string, unknown>)[String(last)];
    return true;
  }

  /** Marks a container built during this draft as safe to modify in place. */
  adopt<T extends object>(value: T): T {
    return this.#fresh(value);
  }

  #fresh<T extends object>(value: T): T {
    this.#owned ??= new Set();
    this.#owned.add(value);
    return value;
  }

  #own<T extends object>(value: T): T {
    if (this.#owned?.has(value)) return value;
    const copy = (Array.isArray(value) ? value.slice() : { ...value }) as T;
    return this.#fresh(copy);
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function assign(parent: object, key: string | number, value: unknown): boolean {
  if (Array.isArray(parent)) {
    if (typeof key !== 'number') return false;
    if (key === -1) {
      parent.push(value);
      return true;
    }
    if (key < 0) return false;
    // sjson pads with nulls when setting past the end.
    while (parent.length < key) parent.push(null);
    parent[key] = value;
    return true;
  }
  const name = String(key);
  // A JSON key named __proto__ is data, never the prototype.
  if (name === '__proto__') {
    Object.defineProperty(parent, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    (parent as Record<string, unknown>)[name] = value;
  }
  return true;
}

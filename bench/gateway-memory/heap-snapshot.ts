/**
 * Reads a V8 heap snapshot (`.heapsnapshot`) and says who holds the heap: the retained size of every object
 * (through the dominator tree: what would be freed if that object went), summed by the module whose code
 * holds it, and the largest single holders with what retains them.
 *
 * An object counts for the nearest owner above it in the dominator tree: a function (its script), a
 * function's scope (the script of a function using it) or a script itself (its source and compiled code).
 * Scripts are grouped by package (`node_modules/<package>`), by folder of our own code, or as Node's own.
 */
import { readFileSync } from 'node:fs';

export interface HeapSummary {
  /** Bytes of every object reachable from the root. */
  totalBytes: number;
  /** Retained bytes by owner, largest first. */
  owners: Array<{ owner: string; bytes: number }>;
  /** The largest objects that no larger listed object retains, with one retaining path. */
  holders: Array<{ bytes: number; what: string; owner: string; path: string }>;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const NO_OWNER = '(V8 and Node internals: roots, handles, shapes)';

/** A script's URL or path as an owner: `<package>`, `gateway/src/<folder>` or `node (built-in)`. */
export function ownerOfScript(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first ?? url);
  }
  const ours = /\/(gateway|operator|console|bench|tests)\/(src\/)?([^/]+)/.exec(url);
  if (ours) {
    const [, workspace, src = '', rest = ''] = ours;
    return `${workspace}/${src}${rest.endsWith('.ts') ? '*.ts' : rest}`;
  }
  // Node's bundled dependencies: amaro (TypeScript type stripping), undici (fetch), acorn…
  const dependency = /^node:internal\/deps\/([^/]+)/.exec(url);
  if (dependency) return `node (built-in ${dependency[1]})`;
  // Scripts without a name are functions made at run time (ajv's validators, fast-json-stringify's serializers).
  if (url === '') return '(functions compiled at run time: new Function, eval)';
  if (url.startsWith('node:') || !url.includes('/')) return 'node (built-in)';
  return url;
}

export function summarizeHeapSnapshot(file: string, top = 20): HeapSummary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [nodeTypes] = meta.node_types;
  const [edgeTypes] = meta.edge_types;
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nf;
  const typeOf = (n: number) => nodeTypes[nodes[n * nf]!]!;
  const nameOf = (n: number) => strings[nodes[n * nf + 1]!]!;
  const sizeOf = (n: number) => nodes[n * nf + 3]!;
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');

  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) firstEdge[n + 1] = firstEdge[n]! + nodes[n * nf + 4]! * ef;
  const follows = (e: number) => edges[e] !== weak && edges[e] !== shortcut;
  const target = (e: number) => edges[e + 2]! / nf;
  const edgeName = (e: number) => {
    const type = edgeTypes[edges[e]!];
    return type === 'element' || type === 'hidden' ? `[${edges[e + 1]}]` : strings[edges[e + 1]!]!;
  };

  // Depth-first post-order from the root (node 0), over strong edges.
  const order = new Int32Array(count).fill(-1);
  const byOrder = new Uint32Array(count);
  let reached = 0;
  {
    const stack = new Uint32Array(count);
    const cursor = new Uint32Array(count);
    const seen = new Uint8Array(count);
    let top = 0;
    stack[0] = 0;
    seen[0] = 1;
    cursor[0] = firstEdge[0]!;
    while (top >= 0) {
      const n = stack[top]!;
      let pushed = false;
      while (cursor[n]! < firstEdge[n + 1]!) {
        const e = cursor[n]!;
        cursor[n] = e + ef;
        if (!follows(e)) continue;
        const to = target(e);
        if (seen[to]) continue;
        seen[to] = 1;
        cursor[to] = firstEdge[to]!;
        stack[++top] = to;
        pushed = true;
        break;
      }
      if (!pushed) {
        order[n] = reached;
        byOrder[reached++] = n;
        top--;
      }
    }
  }

  // Predecessors among reached nodes (CSR), by post-order number.
  const predCount = new Uint32Array(reached + 1);
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) if (follows(e)) predCount[order[target(e)]! + 1]!++;
  }
  for (let i = 0; i < reached; i++) predCount[i + 1]! += predCount[i]!;
  const preds = new Uint32Array(predCount[reached]!);
  const fill = predCount.slice();
  for (let n = 0; n < count; n++) {
    const from = order[n]!;
    if (from < 0) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef)
      if (follows(e)) preds[fill[order[target(e)]!]!++] = from;
  }

  // Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm), in post-order numbers.
  const root = reached - 1;
  const idom = new Int32Array(reached).fill(-1);
  idom[root] = root;
  for (let changed = true; changed; ) {
    changed = false;
    for (let b = root - 1; b >= 0; b--) {
      let next = -1;
      for (let p = predCount[b]!; p < predCount[b + 1]!; p++) {
        let other = preds[p]!;
        if (idom[other] === -1) continue;
        if (next === -1) {
          next = other;
          continue;
        }
        let mine = next;
        while (mine !== other) {
          while (mine < other) mine = idom[mine]!;
          while (other < mine) other = idom[other]!;
        }
        next = mine;
      }
      if (next !== idom[b]) {
        idom[b] = next;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(reached);
  for (let b = 0; b < reached; b++) retained[b]! += sizeOf(byOrder[b]!);
  for (let b = 0; b < root; b++) retained[idom[b]!]! += retained[b]!;

  // Owners: scripts, the functions of a script, and the scopes those functions close over.
  const edgeTo = (n: number, name: string) => {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) if (strings[edges[e + 1]!] === name) return target(e);
    return -1;
  };
  const scriptOwner = (script: number) => ownerOfScript(nameOf(script));
  const ownerOf = new Map<number, string>();
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0) continue;
    const type = typeOf(n);
    const source = type === 'code' ? edgeTo(n, 'source') : -1;
    if (source >= 0 && nameOf(n).length > 0) {
      // A script owns its source text, though Node's caches hold it too.
      ownerOf.set(n, scriptOwner(n));
      ownerOf.set(source, scriptOwner(n));
    } else if (type === 'code') {
      const script = edgeTo(n, 'script');
      if (script >= 0) ownerOf.set(n, scriptOwner(script));
    }
  }
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0 || typeOf(n) !== 'closure') continue;
    const owner = ownerOf.get(edgeTo(n, 'shared'));
    if (owner === undefined) continue;
    ownerOf.set(n, owner);
    const context = edgeTo(n, 'context');
    if (context >= 0 && !ownerOf.has(context)) ownerOf.set(context, owner);
  }
  // CommonJS modules (`Module` objects) by their file; ES modules by the functions they hold.
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0 || ownerOf.has(n)) continue;
    const name = nameOf(n);
    if (name === 'Module') {
      const file = edgeTo(n, 'filename');
      if (file >= 0 && typeOf(file) === 'string') ownerOf.set(n, ownerOfScript(nameOf(file)));
    } else if (name === 'system / SourceTextModule') {
      const owner = ownedWithin(n, 2);
      if (owner !== undefined) ownerOf.set(n, owner);
    }
  }
  function ownedWithin(n: number, hops: number): string | undefined {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) {
      const to = target(e);
      const owner = ownerOf.get(to) ?? (hops > 1 ? ownedWithin(to, hops - 1) : undefined);
      if (owner !== undefined) return owner;
    }
    return undefined;
  }
  // Shortest retaining paths (breadth first from the root), to show how a holder is reached.
  // Also, for what the dominator tree leaves to V8's roots (objects several caches share), the owner on that path.
  const via = new Int32Array(count).fill(-1);
  const pathOwner: Array<string | undefined> = new Array(count);
  {
    const queue = new Uint32Array(count);
    let head = 0;
    let tail = 0;
    queue[tail++] = 0;
    via[0] = 0;
    while (head < tail) {
      const n = queue[head++]!;
      for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) {
        const to = target(e);
        if (!follows(e) || via[to] !== -1) continue;
        via[to] = e;
        pathOwner[to] = ownerOf.get(to) ?? pathOwner[n];
        queue[tail++] = to;
      }
    }
  }
  const edgeOwner = new Int32Array(edges.length / ef);
  for (let n = 0; n < count; n++) for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += ef) edgeOwner[e / ef] = n;

  const ownerByOrder: Array<string | undefined> = new Array(reached);
  for (const [n, owner] of ownerOf) ownerByOrder[order[n]!] = owner;
  // Dominators come later in post-order: resolve from the root down.
  const resolved: string[] = new Array(reached);
  resolved[root] = NO_OWNER;
  for (let b = root - 1; b >= 0; b--) resolved[b] = ownerByOrder[b] ?? resolved[idom[b]!]!;
  for (let b = 0; b < root; b++) if (resolved[b] === NO_OWNER) resolved[b] = pathOwner[byOrder[b]!] ?? NO_OWNER;
  const byOwner = new Map<string, number>();
  for (let b = 0; b < reached; b++) byOwner.set(resolved[b]!, (byOwner.get(resolved[b]!) ?? 0) + sizeOf(byOrder[b]!));

  // The largest holders: objects (not V8's own roots) no larger listed holder dominates.
  const candidates = [...Array(root).keys()]
    .filter((b) => typeOf(byOrder[b]!) !== 'synthetic' && !nameOf(byOrder[b]!).startsWith('('))
    .sort((a, b) => retained[b]! - retained[a]!);
  const listed = new Set<number>();
  const holders: HeapSummary['holders'] = [];
  for (const b of candidates) {
    if (holders.length >= top) break;
    let up = idom[b]!;
    while (up !== root && !listed.has(up)) up = idom[up]!;
    if (listed.has(up)) continue;
    listed.add(b);
    const n = byOrder[b]!;
    holders.push({
      bytes: retained[b]!,
      what: describe(n),
      owner: resolved[b]!,
      path: retainingPath(b),
    });
  }

  function describe(n: number): string {
    const name = nameOf(n).replace(/\s+/g, ' ');
    return `${typeOf(n)} ${name.length > 60 ? `${name.slice(0, 57)}…` : name}`.trim();
  }

  /** The shortest path from the root, from the nearest owned object or named root on it. */
  function retainingPath(b: number): string {
    const steps: string[] = [];
    for (let n = byOrder[b]!; n !== 0 && steps.length < 8; ) {
      const e = via[n]!;
      const from = edgeOwner[e / ef]!;
      steps.push(edgeName(e));
      if (ownerOf.has(from) || nameOf(from).startsWith('(')) {
        steps.push(describe(from));
        break;
      }
      n = from;
    }
    return steps.reverse().join(' → ');
  }

  return {
    totalBytes: retained[root]!,
    owners: [...byOwner].map(([owner, bytes]) => ({ owner, bytes })).sort((a, b) => b.bytes - a.bytes),
    holders,
  };
}

import type { ServerResponse } from 'node:http';
import { errors, statusObject } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { Matcher } from './selectors.ts';
import type { EventType, KubeObject, Store, StoreEvent } from './store.ts';

/**
 * Watch connections: newline-delimited JSON events on a chunked response whose headers are flushed at once.
 * A watch from resourceVersion "0" or none starts with the current objects as ADDED; from a later version it
 * replays the store's event window, or answers one ERROR event with a 410 Expired Status when the window no
 * longer reaches back that far — both as kube-apiserver's watch cache does.
 */

export interface WatchSpec {
  type: ResourceType;
  /** Undefined: every namespace. */
  namespace?: string;
  match: Matcher;
  resourceVersion?: string;
  allowBookmarks: boolean;
  timeoutSeconds?: number;
}

interface Connection {
  spec: WatchSpec;
  res: ServerResponse;
  close(): void;
}

type Waiter = { count: number; type?: ResourceType; resolve: () => void };

export class WatchHub {
  private readonly open = new Set<Connection>();
  private waiters: Waiter[] = [];
  private bookmarkTimer: NodeJS.Timeout | undefined;

  private readonly store: Store;

  constructor(store: Store, bookmarkIntervalMs: number) {
    this.store = store;
    if (bookmarkIntervalMs > 0) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), bookmarkIntervalMs);
      this.bookmarkTimer.unref();
    }
  }

  /** Answers a watch request. Throws (before any byte is written) for a malformed resourceVersion. */
  serve(res: ServerResponse, spec: WatchSpec): void {
    const { store } = this;
    let initial: Array<{ type: EventType; object: KubeObject }> = [];
    let expiredFrom: number | undefined;
    const rv = spec.resourceVersion;
    if (!rv || rv === '0') {
      initial = store.all(spec.type, spec.namespace, spec.match).map((object) => ({ type: 'ADDED', object }));
    } else {
      const from = Number(rv);
      if (!/^\d+$/.test(rv) || !Number.isSafeInteger(from)) throw errors.badRequest(`invalid resource version: ${rv}`);
      const events = store.eventsSince(from);
      if (events === undefined) expiredFrom = from;
      else {
        for (const event of events) {
          const translated = this.translate(spec, event);
          if (translated) initial.push(translated);
        }
      }
    }

    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    res.flushHeaders();
    if (expiredFrom !== undefined) {
      const status = statusObject(
        410,
        `too old resource version: ${expiredFrom} (${store.oldestResumableVersion + 1})`,
        'Expired',
      );
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      return;
    }

    const write = (type: string, object: unknown) => {
      if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify({ type, object })}\n`);
    };
    for (const event of initial) write(event.type, event.object);

    const unsubscribe = store.subscribe((event) => {
      const translated = this.translate(spec, event);
      if (translated) write(translated.type, translated.object);
    });
    let timeout: NodeJS.Timeout | undefined;
    const connection: Connection = {
      spec,
      res,
      close: () => {
        unsubscribe();
        if (timeout) clearTimeout(timeout);
        if (this.open.delete(connection)) this.notify();
      },
    };
    if (spec.timeoutSeconds && spec.timeoutSeconds > 0) {
      timeout = setTimeout(() => res.end(), spec.timeoutSeconds * 1000);
    }
    // 'close' on the response: the client went away or the stream ended.
    res.on('close', connection.close);
    this.open.add(connection);
    this.notify();
  }

  /** Ends every open watch: `graceful` finishes the chunked stream (a server-side timeout); otherwise the socket is destroyed mid-stream. */
  drop(graceful: boolean): number {
    const connections = [...this.open];
    for (const connection of connections) {
      if (graceful) connection.res.end();
      else connection.res.destroy();
      connection.close();
    }
    return connections.length;
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that asked for them. */
  bookmark(): void {
    for (const connection of this.open) {
      if (!connection.spec.allowBookmarks || connection.res.writableEnded) continue;
      const object = {
        kind: connection.spec.type.kind,
        apiVersion: connection.spec.type.apiVersion,
        metadata: { resourceVersion: String(this.store.revision) },
      };
      connection.res.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
    }
  }

  count(type?: ResourceType): number {
    let n = 0;
    for (const connection of this.open) if (!type || connection.spec.type === type) n++;
    return n;
  }

  waitFor(count: number, type: ResourceType | undefined, timeoutMs: number): Promise<void> {
    if (this.count(type) >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `fake-kube: ${this.count(type)} open watches on ${type?.groupResource ?? 'any resource'}, wanted ${count}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      if (type) waiter.type = type;
      this.waiters.push(waiter);
    });
  }

  stop(): void {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.drop(true);
  }

  private notify() {
    const ready = this.waiters.filter((w) => this.count(w.type) >= w.count);
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  /**
   * What a watcher sees of a change: its namespace and selectors filter it, and an object that starts or stops
   * matching the selector arrives as ADDED or DELETED, as the watch cache reports it.
   */
  private translate(spec: WatchSpec, event: StoreEvent): { type: EventType; object: KubeObject } | undefined {
    if (event.resource !== spec.type) return undefined;
    if (spec.namespace !== undefined && spec.type.namespaced && event.object.metadata.namespace !== spec.namespace) {
      return undefined;
    }
    const now = spec.match(event.object);
    const before = event.previous !== undefined && spec.match(event.previous);
    switch (event.type) {
      case 'ADDED':
        return now ? { type: 'ADDED', object: event.object } : undefined;
      case 'DELETED':
        return before || now ? { type: 'DELETED', object: event.object } : undefined;
      case 'MODIFIED':
        if (before && now) return { type: 'MODIFIED', object: event.object };
        if (now) return { type: 'ADDED', object: event.object };
        if (before) return { type: 'DELETED', object: event.object };
        return undefined;
    }
  }
}

import type { Store } from 'react-admin';

/** react-admin store keys kept under the original console's local storage names (spec doc 1 §3). */
const LEGACY_KEYS: Record<string, string> = { theme: 'theme-mode', locale: 'i18nextLng' };
const PREFIX = 'tollgate.';

/**
 * react-admin's store (UI preferences), with three differences from its localStorage store:
 * - the theme and the language live in `theme-mode` and `i18nextLng` as plain strings, and survive
 *   sign-out (react-admin resets its store at logout);
 * - `sidebar.open` is not remembered: each load starts from the server's default_collapse_sidebar;
 * - everything else is JSON under `tollgate.<key>`.
 */
export function consoleStore(options: { sidebarOpen: boolean }): Store {
  const listeners = new Map<string, Set<(value: unknown) => void>>();
  const memory = new Map<string, unknown>([['sidebar.open', options.sidebarOpen]]);
  const publish = (key: string, value: unknown) => {
    for (const listener of listeners.get(key) ?? []) listener(value);
  };
  const storage = () => window.localStorage;
  const prefixedKeys = () => Object.keys(storage()).filter((key) => key.startsWith(PREFIX));
  const onStorage = (event: StorageEvent) => {
    if (!event.key) return;
    const legacy = Object.entries(LEGACY_KEYS).find(([, name]) => name === event.key)?.[0];
    if (legacy) publish(legacy, event.newValue ?? undefined);
    else if (event.key.startsWith(PREFIX)) publish(event.key.slice(PREFIX.length), parse(event.newValue));
  };

  const store: Store = {
    setup: () => window.addEventListener('storage', onStorage),
    teardown: () => window.removeEventListener('storage', onStorage),
    getItem<T>(key: string, defaultValue?: T): T | undefined {
      if (memory.has(key)) return (memory.get(key) ?? defaultValue) as T | undefined;
      const legacy = LEGACY_KEYS[key];
      const raw = storage().getItem(legacy ?? PREFIX + key);
      if (raw === null) return defaultValue;
      return (legacy ? raw : (parse(raw) ?? defaultValue)) as T;
    },
    setItem<T>(key: string, value: T): void {
      if (value === undefined) {
        store.removeItem(key);
        return;
      }
      if (memory.has(key)) memory.set(key, value);
      else if (LEGACY_KEYS[key]) storage().setItem(LEGACY_KEYS[key], String(value));
      else storage().setItem(PREFIX + key, JSON.stringify(value));
      publish(key, value);
    },
    removeItem(key: string): void {
      if (memory.has(key)) memory.set(key, undefined);
      else storage().removeItem(LEGACY_KEYS[key] ?? PREFIX + key);
      publish(key, undefined);
    },
    removeItems(keyPrefix: string): void {
      for (const key of prefixedKeys()) {
        if (key.startsWith(PREFIX + keyPrefix)) store.removeItem(key.slice(PREFIX.length));
      }
    },
    /** At sign-out: forget list filters and the like, keep theme, language and sidebar. */
    reset(): void {
      for (const key of prefixedKeys()) store.removeItem(key.slice(PREFIX.length));
    },
    subscribe(key: string, callback: (value: unknown) => void) {
      const set = listeners.get(key) ?? new Set();
      listeners.set(key, set);
      set.add(callback);
      return () => {
        set.delete(callback);
      };
    },
    listItems(keyPrefix = '') {
      const items: Record<string, unknown> = {};
      for (const key of prefixedKeys()) {
        if (key.startsWith(PREFIX + keyPrefix)) items[key.slice(PREFIX.length)] = parse(storage().getItem(key));
      }
      return items;
    },
  };
  return store;
}

function parse(raw: string | null): unknown {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

import type { ClusterState } from '../../cluster/index.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import type { KeyState } from '../routing/picker.ts';

/**
 * Passive health (issue 18 item 7): a circuit per (channel, key, model), opened by failures seen on
 * real traffic and shared by every pod through the cluster state (Redis, or in-process without it).
 *
 *   closed --N failures in the window--> open --cooldown over--> half-open --probe ok--> closed
 *                                          ^                         |
 *                                          +------probe failed-------+  (cooldown doubles, up to the max)
 *
 * Where each part lives: failures in a sliding-window counter; the state of open circuits (and the
 * generation of closed ones) in a capped map every pod can list at start; the one probe of a half-open
 * circuit in a set-if-absent key, so exactly one request across pods takes it; transitions on the bus,
 * so every pod's in-memory view (read by the picker without waiting) changes within a moment. A change
 * is made under a short lock, so two pods seeing the same failures make one transition.
 *
 * A dependency outage never blocks traffic: any cluster error leaves the circuit as this pod saw it and
 * lets the request through.
 */

export type CircuitState = 'closed' | 'open' | 'half_open';

/** The settings (circuit_setting.*), read on every use so that a change applies at once. */
export interface CircuitSettings {
  enabled: boolean;
  failureThreshold: number;
  windowMs: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

/** What every pod knows of one circuit that has ever opened. */
interface CircuitView {
  state: 'closed' | 'open';
  /** When it last opened (ms); the generation of failure counting once closed again. */
  openedAt: number;
  /** Open until (ms): after it the circuit is half-open. */
  until: number;
  /** Failed probes in a row: the cooldown is base × 2^level, capped. */
  level: number;
}

/** A request's pass through a circuit: whether it is the half-open probe, for the verdict. */
export interface CircuitTicket {
  readonly channelId: number;
  readonly keyIndex: number;
  readonly model: string;
  readonly probe: boolean;
  /** The probe holds the half-open slot (not a fallback's probe): released when it gets no verdict. */
  readonly slot?: boolean;
}

export interface CircuitTransition {
  channelId: number;
  from: CircuitState;
  to: CircuitState;
}

export interface CircuitsDeps {
  cluster: Pick<ClusterState, 'bus' | 'counters' | 'kv' | 'capped' | 'locks'>;
  options: OptionsService;
  /** Told of every transition this pod makes (metrics). */
  onTransition?: (transition: CircuitTransition) => void;
  now?: () => number;
}

const BUS_CHANNEL = 'circuits';
const STATE_MAP = 'circuits';
/** More circuits than any deployment has; the map trims the soonest-expiring beyond it. */
const MAX_STORED = 100_000;
/** How long a probe holds its slot when its pod never says how it went (the pod died). */
const PROBE_TTL_MS = 120_000;
/** After losing the race for a probe, this pod stops asking for that long (the probe is under way). */
const PROBE_BUSY_MS = 1_000;
const TRANSITION_LOCK_MS = 5_000;

export function readCircuitSettings(options: OptionsService): CircuitSettings {
  const cooldownMs = options.getNumber('circuit_setting.cooldown_seconds') * 1000;
  return {
    enabled: options.getBoolean('circuit_setting.enabled'),
    failureThreshold: options.getNumber('circuit_setting.failure_threshold'),
    windowMs: options.getNumber('circuit_setting.window_seconds') * 1000,
    cooldownMs,
    // A maximum below the base would shorten the first cooldown: the base wins.
    maxCooldownMs: Math.max(cooldownMs, options.getNumber('circuit_setting.max_cooldown_seconds') * 1000),
  };
}

/** Whether an upstream failure with this status counts against the circuit (the upstream's fault, not the request's). */
export function countsAsCircuitFailure(status: number): boolean {
  if (!(status >= 100 && status <= 599)) return true;
  // 401/402/403: the channel's key or account; 408: the upstream was too slow; 429: it is overloaded.
  return status >= 500 || status === 401 || status === 402 || status === 403 || status === 408 || status === 429;
}

export class Circuits {
  readonly #deps: CircuitsDeps;
  readonly #now: () => number;
  readonly #views = new Map<string, CircuitView>();
  /** Open circuits per channel: a channel with none is passed without looking at its keys. */
  readonly #openPerChannel = new Map<number, number>();
  /** Half-open circuits whose probe another request holds, until when this pod stops asking. */
  readonly #probeBusy = new Map<string, number>();
  #unsubscribe: (() => Promise<void>) | undefined;

  constructor(deps: CircuitsDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  get settings(): CircuitSettings {
    return readCircuitSettings(this.#deps.options);
  }

  /** Follows other pods' transitions and loads the circuits open now. */
  async start(): Promise<void> {
    const { bus, capped } = this.#deps.cluster;
    this.#unsubscribe = await bus.subscribe(BUS_CHANNEL, (message) => this.#apply(message));
    for (const key of await capped.keys(STATE_MAP)) {
      const stored = await capped.get(STATE_MAP, key);
      if (stored) this.#apply(stored);
    }
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
  }

  /** The state of one circuit as this pod sees it now. */
  state(channelId: number, keyIndex: number, model: string): CircuitState {
    const view = this.#views.get(circuitKey(channelId, keyIndex, model));
    if (!view || view.state === 'closed') return 'closed';
    return this.#now() < view.until ? 'open' : 'half_open';
  }

  /** Open circuits in this pod's view (half-open ones included), per channel: the gauge. */
  openCounts(): ReadonlyMap<number, number> {
    return this.#openPerChannel;
  }

  /**
   * For the picker: when the channel cannot take this request because every enabled key's circuit is
   * open (cooling down, or half-open with its probe under way elsewhere), when the last of them opened;
   * undefined when some key can take it (or circuits are off).
   */
  blockedSince(channelId: number, keys: number, model: string, keyState?: KeyState): number | undefined {
    if (!this.#openPerChannel.get(channelId) || !this.#deps.options.getBoolean('circuit_setting.enabled'))
      return undefined;
    const now = this.#now();
    let latest = 0;
    let usable = 0;
    for (let index = 0; index < keys; index++) {
      if (keyState?.disabled.has(index)) continue;
      usable++;
      const key = circuitKey(channelId, index, model);
      const view = this.#views.get(key);
      if (!view || view.state === 'closed') return undefined;
      if (now >= view.until && (this.#probeBusy.get(key) ?? 0) <= now) return undefined;
      latest = Math.max(latest, view.openedAt);
    }
    return usable > 0 ? latest : undefined;
  }

  /**
   * The key state for picking a key of `channelId` with the keys whose circuits are open passed over,
   * as if disabled; the picker's own state when none is (or when all are: the channel was then chosen
   * as the fallback and any key will do). Writes to the cursor go to the routing index's state.
   */
  keyStateAvoidingOpen(
    channelId: number,
    keys: number,
    model: string,
    base: KeyState | undefined,
  ): KeyState | undefined {
    if (!this.#openPerChannel.get(channelId) || !this.#deps.options.getBoolean('circuit_setting.enabled')) return base;
    const now = this.#now();
    const avoided = new Set<number>(base?.disabled ?? []);
    let added = false;
    for (let index = 0; index < keys; index++) {
      if (avoided.has(index)) continue;
      const key = circuitKey(channelId, index, model);
      const view = this.#views.get(key);
      if (!view || view.state === 'closed') continue;
      if (now >= view.until && (this.#probeBusy.get(key) ?? 0) <= now) continue;
      avoided.add(index);
      added = true;
    }
    if (!added || avoided.size >= keys) return base;
    const state = base ?? { cursor: 0, disabled: new Set<number>() };
    return {
      get cursor() {
        return state.cursor;
      },
      set cursor(value: number) {
        state.cursor = value;
      },
      disabled: avoided,
    };
  }

  /**
   * Lets a request through the circuit of the key it is about to use: a closed or open one (an open
   * one only when the picker fell back to it) at once; a half-open one only for the one request that
   * takes its probe, across pods. Undefined when another request holds the probe: pick again.
   */
  async admit(
    channelId: number,
    keyIndex: number,
    model: string,
    fallback = false,
  ): Promise<CircuitTicket | undefined> {
    const key = circuitKey(channelId, keyIndex, model);
    const view = this.#views.get(key);
    // The hot path: a circuit that never opened costs one map lookup.
    if (!view || view.state === 'closed' || !this.#deps.options.getBoolean('circuit_setting.enabled')) {
      return { channelId, keyIndex, model, probe: false };
    }
    // A fallback to an open circuit is a probe without exclusivity: its verdict counts all the same.
    if (fallback) return { channelId, keyIndex, model, probe: true };
    const now = this.#now();
    if (now < view.until || (this.#probeBusy.get(key) ?? 0) > now) return undefined;
    try {
      const won = await this.#deps.cluster.kv.setIfAbsent(probeKey(key, view), '1', PROBE_TTL_MS);
      if (!won) {
        this.#probeBusy.set(key, now + PROBE_BUSY_MS);
        return undefined;
      }
    } catch {
      // The shared state is out of reach: one pod may probe on its own rather than block the channel.
    }
    this.#deps.onTransition?.({ channelId, from: 'open', to: 'half_open' });
    return { channelId, keyIndex, model, probe: true, slot: true };
  }

  /** The request through `ticket` was answered by the upstream: a probe's success closes the circuit. */
  async succeeded(ticket: CircuitTicket): Promise<void> {
    if (!ticket.probe) return;
    const key = circuitKey(ticket.channelId, ticket.keyIndex, ticket.model);
    await this.#transition(key, ticket.channelId, (stored) => {
      if (stored?.state !== 'open') return undefined;
      // Closed keeps the generation: failures from before the opening no longer count.
      return { state: 'closed', openedAt: this.#now(), until: 0, level: 0 };
    });
    this.#probeBusy.delete(key);
  }

  /**
   * The upstream failed the request through `ticket` (a status `countsAsCircuitFailure` accepts, a
   * timeout, a broken connection): counted; the threshold within the window opens the circuit, a
   * failed probe opens it again for twice as long.
   */
  async failed(ticket: CircuitTicket): Promise<void> {
    const settings = this.settings;
    if (!settings.enabled) return;
    const key = circuitKey(ticket.channelId, ticket.keyIndex, ticket.model);
    const view = this.#views.get(key);
    if (ticket.probe) {
      const escalate = view !== undefined && view.state === 'open' && this.#now() >= view.until;
      await this.#transition(key, ticket.channelId, (stored) =>
        stored?.state === 'open' ? this.#opened(settings, escalate ? stored.level + 1 : stored.level) : undefined,
      );
      this.#probeBusy.delete(key);
      return;
    }
    if (view?.state === 'open') return;
    // Failures are counted per generation: those from before the last closing no longer count. After a
    // window the old generation holds nothing, and 0 is used, as by a pod that never saw the closing.
    const generation = view && this.#now() - view.openedAt < settings.windowMs ? view.openedAt : 0;
    let count: number;
    try {
      count = await this.#deps.cluster.counters.add(`circuit-fail:${key}:${generation}`, settings.windowMs);
    } catch {
      return;
    }
    if (count < settings.failureThreshold) return;
    await this.#transition(key, ticket.channelId, (stored) =>
      stored?.state === 'open' ? undefined : this.#opened(settings, 0),
    );
  }

  /** A request that got no verdict (refused before the upstream, the client left first): its probe is free again. */
  async released(ticket: CircuitTicket): Promise<void> {
    if (!ticket.slot) return;
    const key = circuitKey(ticket.channelId, ticket.keyIndex, ticket.model);
    const view = this.#views.get(key);
    this.#probeBusy.delete(key);
    if (view?.state === 'open') await this.#deps.cluster.kv.delete(probeKey(key, view)).catch(() => {});
  }

  #opened(settings: CircuitSettings, level: number): CircuitView {
    const now = this.#now();
    const cooldown = Math.min(settings.cooldownMs * 2 ** Math.min(level, 40), settings.maxCooldownMs);
    return { state: 'open', openedAt: now, until: now + cooldown, level };
  }

  /** Changes one circuit under its lock, from the stored state: stored, announced to every pod, counted. */
  async #transition(
    key: string,
    channelId: number,
    decide: (stored: CircuitView | undefined) => CircuitView | undefined,
  ): Promise<void> {
    const { locks, capped, bus } = this.#deps.cluster;
    const settings = this.settings;
    try {
      const lock = await locks.acquire(`circuit:${key}`, TRANSITION_LOCK_MS);
      if (!lock) return;
      try {
        const text = await capped.get(STATE_MAP, key);
        const stored = text ? parseView(text)?.view : this.#views.get(key);
        const next = decide(stored);
        if (!next) return;
        const from: CircuitState =
          stored?.state !== 'open' ? 'closed' : this.#now() < stored.until ? 'open' : 'half_open';
        // An open circuit is remembered past its cooldown (for its backoff level); a closed one for a window.
        const ttl = next.state === 'open' ? next.until - this.#now() + settings.maxCooldownMs : settings.windowMs;
        const message = JSON.stringify({ key, ...next });
        await capped.set(STATE_MAP, key, message, Math.max(1, ttl), MAX_STORED);
        this.#apply(message);
        await bus.publish(BUS_CHANNEL, message);
        const to = next.state === 'open' ? 'open' : 'closed';
        // A fallback that failed during the cooldown restarts it: no change of state to count.
        if (from !== to) this.#deps.onTransition?.({ channelId, from, to });
      } finally {
        await lock.release();
      }
    } catch {
      // Shared state out of reach: the circuit stays as it was; traffic is never blocked by the outage.
    }
  }

  /** Takes a stored or announced circuit into this pod's view. */
  #apply(message: string): void {
    const parsed = parseView(message);
    if (!parsed) return;
    const { key, view } = parsed;
    const before = this.#views.get(key);
    // Announcements may arrive after a newer state was applied: the later opening wins.
    if (before && before.openedAt > view.openedAt) return;
    const channelId = Number(key.slice(0, key.indexOf(':')));
    const wasOpen = before?.state === 'open';
    const isOpen = view.state === 'open';
    this.#views.set(key, view);
    if (wasOpen !== isOpen) {
      const count = (this.#openPerChannel.get(channelId) ?? 0) + (isOpen ? 1 : -1);
      if (count > 0) this.#openPerChannel.set(channelId, count);
      else this.#openPerChannel.delete(channelId);
    }
    if (!isOpen) this.#probeBusy.delete(key);
  }
}

/** `<channel>:<key index>:<model>`: the channel id first, so that the id can be read back. */
function circuitKey(channelId: number, keyIndex: number, model: string): string {
  return `${channelId}:${keyIndex}:${model}`;
}

/** One probe per opening: the opening's time is in the name. */
function probeKey(key: string, view: CircuitView): string {
  return `circuit-probe:${key}:${view.openedAt}`;
}

function parseView(text: string): { key: string; view: CircuitView } | undefined {
  try {
    const value = JSON.parse(text) as Partial<CircuitView> & { key?: unknown };
    if (typeof value.key !== 'string' || (value.state !== 'open' && value.state !== 'closed')) return undefined;
    const numbers = [value.openedAt, value.until, value.level];
    if (!numbers.every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
    return {
      key: value.key,
      view: {
        state: value.state,
        openedAt: value.openedAt as number,
        until: value.until as number,
        level: value.level as number,
      },
    };
  } catch {
    return undefined;
  }
}

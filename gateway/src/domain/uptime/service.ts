import type { OptionsService } from '../options/index.ts';
import { type UptimeGroup, uptimeGroups } from './groups.ts';

/** One monitor as the dashboard shows it (new-api's shape). */
export interface UptimeMonitor {
  name: string;
  /** The 24-hour uptime, 0-1. */
  uptime: number;
  /** Uptime Kuma's status of the latest heartbeat: 0 down, 1 up, 2 pending, 3 maintenance; 0 when none. */
  status: number;
  /** The status page's group the monitor is listed in. */
  group: string;
}

export interface UptimeGroupResult {
  categoryName: string;
  monitors: UptimeMonitor[];
}

// Uptime Kuma's public status-page answers, only the fields read here.
interface StatusPage {
  publicGroupList?: Array<{ name?: string; monitorList?: Array<{ id: number; name: string }> }>;
}
interface Heartbeats {
  heartbeatList?: Record<string, Array<{ status?: number }>>;
  uptimeList?: Record<string, number>;
}

export interface UptimeDeps {
  options: Pick<OptionsService, 'getJson' | 'getBoolean'>;
  /** Per status-page call. */
  timeoutMs?: number;
  /** How long an answer is reused, so a busy dashboard does not hammer the status pages. */
  cacheMs?: number;
  now?: () => number;
}

/**
 * GET /api/uptime/status: each configured Uptime Kuma status page's monitors with their 24-hour uptime
 * and latest status, fetched in parallel. A page that does not answer in time (or answers nonsense)
 * shows with no monitors, as new-api does, so one dead server never blanks the panel. The addresses
 * are the administrators' own (often internal) servers, so they are called directly, not through the
 * fetch_setting.* guard that protects against users' addresses.
 */
export class UptimeService {
  readonly #options: UptimeDeps['options'];
  readonly #timeoutMs: number;
  readonly #cacheMs: number;
  readonly #now: () => number;
  #cached: { key: string; at: number; answer: Promise<UptimeGroupResult[]> } | undefined;

  constructor(deps: UptimeDeps) {
    this.#options = deps.options;
    this.#timeoutMs = deps.timeoutMs ?? 10_000;
    this.#cacheMs = deps.cacheMs ?? 60_000;
    this.#now = deps.now ?? Date.now;
  }

  status(): Promise<UptimeGroupResult[]> {
    const groups = uptimeGroups(this.#options);
    // A changed configuration is fetched at once, not after the cache runs out.
    const key = JSON.stringify(groups);
    const now = this.#now();
    const cached = this.#cached;
    if (cached && cached.key === key && now - cached.at < this.#cacheMs) return cached.answer;
    const answer = Promise.all(groups.map((group) => this.#fetchGroup(group)));
    this.#cached = { key, at: now, answer };
    return answer;
  }

  async #fetchGroup(group: UptimeGroup): Promise<UptimeGroupResult> {
    const result: UptimeGroupResult = { categoryName: group.categoryName, monitors: [] };
    const base = group.url.trim().replace(/\/+$/, '');
    const slug = encodeURIComponent(group.slug.trim());
    try {
      const [page, beats] = await Promise.all([
        this.#getJson<StatusPage>(`${base}/api/status-page/${slug}`),
        this.#getJson<Heartbeats>(`${base}/api/status-page/heartbeat/${slug}`),
      ]);
      for (const publicGroup of page.publicGroupList ?? []) {
        for (const monitor of publicGroup.monitorList ?? []) {
          const id = String(monitor.id);
          const list = beats.heartbeatList?.[id];
          // Uptime Kuma lists heartbeats oldest first: the last one is the current state.
          const latest = Array.isArray(list) ? list.at(-1)?.status : undefined;
          const uptime = beats.uptimeList?.[`${id}_24`];
          result.monitors.push({
            name: String(monitor.name ?? ''),
            uptime: typeof uptime === 'number' && Number.isFinite(uptime) ? uptime : 0,
            status: Number.isInteger(latest) ? (latest as number) : 0,
            group: String(publicGroup.name ?? ''),
          });
        }
      }
    } catch {
      result.monitors = [];
    }
    return result;
  }

  async #getJson<T>(url: string): Promise<T> {
    const response = await fetch(url, { signal: AbortSignal.timeout(this.#timeoutMs), redirect: 'error' });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`HTTP ${response.status}`);
    }
    const body: unknown = await response.json();
    if (body === null || typeof body !== 'object') throw new Error('not an object');
    return body as T;
  }
}

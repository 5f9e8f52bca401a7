import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import type { Database } from '../../store/database.ts';
import { listGroups } from '../../store/repositories/groups.ts';
import type { OptionsService } from '../options/index.ts';
import { type RateLimits, readRateLimits } from '../rate-limits.ts';
import { GROUPS_CHANNEL } from './managed.ts';

interface GroupRow {
  name: string;
  ratio: number;
  description: string;
  selectable: boolean;
  user_group_ratios: string;
  rate_limits: string;
}

type Ratios = Record<string, number>;

const OVERLAID = ['GroupRatio', 'GroupGroupRatio', 'UserUsableGroups', 'rate_limit_setting.groups'] as const;

/**
 * Group custom resources (rows of `groups`, written by the operator) as every reader of the group
 * options sees them: each row sets its group's ratio in GroupRatio, its per-user-group ratios in
 * GroupGroupRatio, whether users may pick it in UserUsableGroups, and its rate limits (when it declares
 * any) in rate_limit_setting.groups. The stored options stay what
 * administrators wrote; rows are re-read when the operator announces a change on the bus.
 */
export class GroupsOverlay {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  #unsubscribe: (() => Promise<void>) | undefined;

  private constructor(db: Kysely<Database>, options: OptionsService) {
    this.#db = db;
    this.#options = options;
  }

  static async start(deps: { db: Kysely<Database>; options: OptionsService; bus: Bus }): Promise<GroupsOverlay> {
    const overlay = new GroupsOverlay(deps.db, deps.options);
    overlay.#unsubscribe = await deps.bus.subscribe(GROUPS_CHANNEL, () => {
      overlay.reload().catch(() => {});
    });
    await overlay.reload();
    return overlay;
  }

  async reload(): Promise<void> {
    this.#apply(await listGroups(this.#db));
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
    this.#apply([]);
  }

  #apply(rows: GroupRow[]): void {
    if (rows.length === 0) {
      for (const key of OVERLAID) this.#options.setOverlay(key, undefined);
      return;
    }
    this.#options.setOverlay('GroupRatio', (stored) => {
      const ratios: Ratios = { ...(stored as Ratios) };
      for (const row of rows) ratios[row.name] = row.ratio;
      return ratios;
    });
    this.#options.setOverlay('GroupGroupRatio', (stored) => {
      const nested: Record<string, Ratios> = {};
      for (const [userGroup, ratios] of Object.entries(stored as Record<string, Ratios>))
        nested[userGroup] = { ...ratios };
      for (const row of rows) {
        for (const [userGroup, ratio] of Object.entries(parseRatios(row.user_group_ratios))) {
          nested[userGroup] = { ...nested[userGroup], [row.name]: ratio };
        }
      }
      return nested;
    });
    this.#options.setOverlay('UserUsableGroups', (stored) => {
      const usable: Record<string, string> = { ...(stored as Record<string, string>) };
      for (const row of rows) {
        if (row.selectable) usable[row.name] = row.description || row.name;
        else delete usable[row.name];
      }
      return usable;
    });
    this.#options.setOverlay('rate_limit_setting.groups', (stored) => {
      const limits: Record<string, RateLimits> = { ...(stored as Record<string, RateLimits>) };
      for (const row of rows) {
        const declared = readRateLimits(row.rate_limits);
        if (Object.keys(declared).length > 0) limits[row.name] = declared;
      }
      return limits;
    });
  }
}

function parseRatios(text: string): Ratios {
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(
      Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
    );
  } catch {
    return {};
  }
}

import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import type { Database } from '../../store/database.ts';
import { enabledModelGroups, listModelPrices, type ModelPriceRow } from '../../store/repositories/model-prices.ts';
import { compileExpression } from '../billing/expr/index.ts';
import { TIERED_MODE } from '../billing/tiered.ts';
import { assertUnmanaged } from '../managed.ts';
import type { OptionsService } from '../options/index.ts';

export const PRICES_CHANNEL = 'model-prices';

/** The option maps that price models, and the model_prices column each one corresponds to. */
export const PRICE_OPTIONS = {
  ModelRatio: 'model_ratio',
  CompletionRatio: 'completion_ratio',
  ModelPrice: 'model_price',
  CacheRatio: 'cache_ratio',
  CreateCacheRatio: 'cache_creation_ratio',
} as const satisfies Record<string, keyof ModelPriceRow>;

export type PriceOption = keyof typeof PRICE_OPTIONS;

/** The options of expression billing, which ModelPrice resources with an expression also set. */
export const BILLING_MODE_OPTION = 'billing_setting.billing_mode';
export const BILLING_EXPR_OPTION = 'billing_setting.billing_expr';
export type PriceMaps = Record<PriceOption, Record<string, number>>;
const PRICE_OPTION_KEYS = Object.keys(PRICE_OPTIONS) as PriceOption[];

export interface PricingItem {
  model_name: string;
  /** 0 pay per usage (ratios), 1 pay per call (model_price). */
  quota_type: 0 | 1;
  model_ratio: number;
  completion_ratio: number;
  model_price: number;
  enable_groups: string[];
  /** False when the model has neither a ratio nor a price: external usage mode refuses it. */
  configured: boolean;
  /** `tiered_expr` when a billing expression prices the model (its ratios and price are then 0, unused). */
  billing_mode?: 'tiered_expr';
  /** The expression: coefficients in USD per 1M tokens, before the group ratio. */
  billing_expr?: string;
  /** The tier names the expression can select, in the order written. */
  billing_tiers?: string[];
}

/**
 * Model prices. Administrators edit the option maps (ModelRatio, CompletionRatio, ModelPrice, …) as
 * in new-api; ModelPrice custom resources, reconciled into model_prices, lay their values over them
 * and own those models: an option edit that changes a managed model is refused, naming the resource.
 */
export class PricingService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  #managed: ModelPriceRow[] = [];
  /** maps() as last built, with the option values and rows it was built from (by identity). */
  #built:
    | { options: Partial<Record<PriceOption, unknown>>; managed: ModelPriceRow[]; maps: Readonly<PriceMaps> }
    | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;

  private constructor(db: Kysely<Database>, options: OptionsService) {
    this.#db = db;
    this.#options = options;
  }

  static async start(deps: { db: Kysely<Database>; options: OptionsService; bus: Bus }): Promise<PricingService> {
    const service = new PricingService(deps.db, deps.options);
    service.#unsubscribe = await deps.bus.subscribe(PRICES_CHANNEL, () => {
      service.reload().catch(() => {});
    });
    await service.reload();
    return service;
  }

  /** Re-reads the model_prices rows (another pod or the operator changed them). */
  async reload(): Promise<void> {
    this.#managed = await listModelPrices(this.#db);
    this.#overlayExpressions();
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
    this.#managed = [];
    this.#overlayExpressions();
  }

  /**
   * Lays the rows over billing_setting as every reader sees it: a row with an expression puts its model
   * in `tiered_expr` mode with that expression; any other row takes its model out of expression mode,
   * since the resource prices the model by its ratios or per call.
   */
  #overlayExpressions(): void {
    const rows = this.#managed;
    const lay = (entryFor: (expression: string) => string) =>
      rows.length === 0
        ? undefined
        : (stored: unknown) => {
            const map: Record<string, string> = { ...(stored as Record<string, string>) };
            for (const row of rows) {
              if (row.billing_expr) map[row.model] = entryFor(row.billing_expr);
              else delete map[row.model];
            }
            return map;
          };
    this.#options.setOverlay(
      BILLING_MODE_OPTION,
      lay(() => TIERED_MODE),
    );
    this.#options.setOverlay(
      BILLING_EXPR_OPTION,
      lay((expression) => expression),
    );
  }

  /**
   * The effective maps: the options, with every model_prices row laid over them. Built once per change
   * of an option or of the rows (the relay prices every request with them), frozen: read-only.
   */
  maps(): Readonly<PriceMaps> {
    const built = this.#built;
    if (
      built?.managed === this.#managed &&
      PRICE_OPTION_KEYS.every((key) => built.options[key] === this.#options.getJson(key))
    ) {
      return built.maps;
    }
    const options: Partial<Record<PriceOption, unknown>> = {};
    const maps = {} as PriceMaps;
    for (const key of PRICE_OPTION_KEYS) {
      const stored = this.#options.getJson<Record<string, number>>(key);
      options[key] = stored;
      maps[key] = { ...stored };
    }
    for (const row of this.#managed) {
      for (const [key, column] of Object.entries(PRICE_OPTIONS) as Array<[PriceOption, keyof ModelPriceRow]>) {
        const value = row[column];
        if (typeof value === 'number') maps[key][row.model] = value;
        else delete maps[key][row.model];
      }
    }
    for (const key of PRICE_OPTION_KEYS) Object.freeze(maps[key]);
    this.#built = { options, managed: this.#managed, maps: Object.freeze(maps) };
    return this.#built.maps;
  }

  /** Refuses an option write that would change the price of a model a custom resource owns. */
  assertOptionEditAllowed(key: string, value: string): void {
    if (this.#managed.length === 0) return;
    if (key === BILLING_MODE_OPTION || key === BILLING_EXPR_OPTION) {
      const next = JSON.parse(value) as Record<string, string>;
      for (const row of this.#managed) {
        const owned = row.billing_expr ? (key === BILLING_MODE_OPTION ? TIERED_MODE : row.billing_expr) : null;
        if ((next[row.model] ?? null) !== owned) assertUnmanaged(row, 'ModelPrice', [`${key}.${row.model}`]);
      }
      return;
    }
    if (!(key in PRICE_OPTIONS)) return;
    const column = PRICE_OPTIONS[key as PriceOption];
    const next = JSON.parse(value) as Record<string, number>;
    for (const row of this.#managed) {
      const owned = row[column];
      if ((next[row.model] ?? null) !== owned) assertUnmanaged(row, 'ModelPrice', [`${key}.${row.model}`]);
    }
  }

  /** GET /api/pricing's items: every model some enabled channel serves, priced as billing will price it. */
  async catalogue(visibleGroups?: ReadonlySet<string>): Promise<PricingItem[]> {
    const maps = this.maps();
    const items: PricingItem[] = [];
    for (const [model, groups] of await enabledModelGroups(this.#db)) {
      const enableGroups = visibleGroups ? groups.filter((g) => visibleGroups.has(g)) : groups;
      if (enableGroups.length === 0) continue;
      const expression = this.#expressionOf(model);
      if (expression) {
        // Billing prices such a model by its expression only: a ratio or price shown beside it would mislead.
        items.push({
          model_name: model,
          quota_type: 0,
          model_ratio: 0,
          completion_ratio: 0,
          model_price: 0,
          enable_groups: enableGroups,
          configured: true,
          billing_mode: TIERED_MODE,
          billing_expr: expression.source,
          billing_tiers: [...expression.tiers],
        });
        continue;
      }
      const price = maps.ModelPrice[model];
      const ratio = maps.ModelRatio[model];
      items.push({
        model_name: model,
        quota_type: price === undefined ? 0 : 1,
        model_ratio: ratio ?? 0,
        completion_ratio: maps.CompletionRatio[model] ?? 1,
        model_price: price ?? 0,
        enable_groups: enableGroups,
        configured: price !== undefined || ratio !== undefined,
      });
    }
    return items;
  }

  /** The billing expression pricing `model` (billing_setting, ModelPrice resources laid over), if any. */
  #expressionOf(model: string): { source: string; tiers: readonly string[] } | undefined {
    const modes = this.#options.getJson<Record<string, string>>(BILLING_MODE_OPTION);
    const sources = this.#options.getJson<Record<string, string>>(BILLING_EXPR_OPTION);
    if (!Object.hasOwn(modes, model) || modes[model] !== TIERED_MODE || !Object.hasOwn(sources, model))
      return undefined;
    const source = sources[model];
    if (typeof source !== 'string' || source.trim() === '') return undefined;
    try {
      return compileExpression(source);
    } catch {
      // Stored only by writing the database directly (the relay refuses the model): shown, without tiers.
      return { source, tiers: [] };
    }
  }
}

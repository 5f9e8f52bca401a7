import { AppError } from '../../errors.ts';
import type { ModelPrice } from '../../relay/types.ts';
import type { PriceMaps } from '../pricing/service.ts';
import { billingErrors } from './errors.ts';
import { type BillingOptions, isRecord, numberAt, ratioMap } from './options.ts';
import { tieredExpressionFor } from './tiered.ts';

/** Ratio of a model with neither a price nor a ratio, when it is accepted at all (reference §5.2). */
export const DEFAULT_UNSET_MODEL_RATIO = 37.5;
export const DEFAULT_CACHE_CREATION_RATIO = 1.25;
/** A 1-hour cache write costs 1.6 × a 5-minute one (Claude: 2× vs 1.25× input). */
export const CACHE_CREATION_1H_MULTIPLIER = 1.6;

export interface ResolvePriceInput {
  /** The model the client asked for (billing is by the requested model, not the mapped one). */
  model: string;
  /** The group the request runs in (the token's group, or the one `auto` resolved to). */
  usingGroup: string;
  /** The user's own group, the first key of GroupGroupRatio. */
  userGroup: string;
  /** PricingService.maps(): the option maps with managed model prices laid over them. */
  maps: Readonly<PriceMaps>;
  options: BillingOptions;
  /** The user setting `accept_unset_model_ratio_model`. */
  acceptUnset: boolean;
}

/**
 * The price of one model for one request (reference §5.2). A billing expression (`tiered_expr` mode)
 * wins over everything, then a fixed per-call price over ratios; a model with none is refused unless
 * self-use mode is on or the user accepts unpriced models, in which case it is billed at ratio 37.5.
 */
export function resolvePrice(input: ResolvePriceInput): ModelPrice {
  const { model, maps, options } = input;
  const expression = tieredExpressionFor(options, model);
  const perCallUsd = expression ? undefined : numberAt(maps.ModelPrice, model);
  const ratio = numberAt(maps.ModelRatio, model);
  const configured = expression !== undefined || perCallUsd !== undefined || ratio !== undefined;
  if (!configured && !input.acceptUnset && !options.getBoolean('SelfUseModeEnabled')) {
    throw new AppError(billingErrors.MODEL_PRICE_NOT_CONFIGURED, { model });
  }
  const group = resolveGroupRatio(options, input.userGroup, input.usingGroup);
  const price: ModelPrice = {
    // Unused in price and expression modes: 0 rather than a ratio that does not apply keeps logs honest.
    modelRatio: expression ? 0 : (ratio ?? (perCallUsd !== undefined ? 0 : DEFAULT_UNSET_MODEL_RATIO)),
    completionRatio: numberAt(maps.CompletionRatio, model) ?? 1,
    cacheRatio: numberAt(maps.CacheRatio, model) ?? 1,
    cacheCreationRatio: numberAt(maps.CreateCacheRatio, model) ?? DEFAULT_CACHE_CREATION_RATIO,
    imageRatio: numberAt(ratioMap(options, 'ImageRatio'), model) ?? 1,
    audioRatio: numberAt(ratioMap(options, 'AudioRatio'), model) ?? 1,
    audioCompletionRatio: numberAt(ratioMap(options, 'AudioCompletionRatio'), model) ?? 1,
    groupRatio: group.groupRatio,
    configured,
  };
  if (perCallUsd !== undefined) price.perCallUsd = perCallUsd;
  if (expression) price.expression = expression;
  if (group.userGroupRatio !== undefined) price.userGroupRatio = group.userGroupRatio;
  return price;
}

/** The name new-api prices a Responses compaction under: the model with this suffix. */
export const COMPACTION_PRICE_SUFFIX = '-openai-compact';

/**
 * The name a Responses compaction (`/v1/responses/compact`) of `model` is priced by: `<model>-openai-compact`
 * when that name has a price or ratio of its own, so compaction can be priced apart as in new-api, else
 * the model's own.
 */
export function compactionPriceModel(model: string, maps: Readonly<PriceMaps>): string {
  const compact = `${model}${COMPACTION_PRICE_SUFFIX}`;
  const priced = numberAt(maps.ModelPrice, compact) !== undefined || numberAt(maps.ModelRatio, compact) !== undefined;
  return priced ? compact : model;
}

/**
 * GroupGroupRatio[userGroup][usingGroup] when set (a discount for one user group in one using
 * group), else GroupRatio[usingGroup], else 1.
 */
export function resolveGroupRatio(
  options: BillingOptions,
  userGroup: string,
  usingGroup: string,
): { groupRatio: number; userGroupRatio?: number } {
  const nested = options.getJson<unknown>('GroupGroupRatio');
  const byUser = isRecord(nested) ? nested[userGroup] : undefined;
  const special = isRecord(byUser) ? numberAt(byUser, usingGroup) : undefined;
  if (special !== undefined) return { groupRatio: special, userGroupRatio: special };
  return { groupRatio: numberAt(ratioMap(options, 'GroupRatio'), usingGroup) ?? 1 };
}

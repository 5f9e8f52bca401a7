import type { FastifyInstance } from 'fastify';
import type { CatalogueService } from '../domain/catalogue/service.ts';
import { modelsByChannelType } from '../domain/channels/index.ts';
import { groupRatio, usableGroups } from '../domain/groups.ts';
import type { OptionsService } from '../domain/options/index.ts';
import type { PricingService } from '../domain/pricing/service.ts';
import type { authGuards } from './auth.ts';
import { ok } from './envelope.ts';

export interface PricingRouteDeps {
  guards: ReturnType<typeof authGuards>;
  options: OptionsService;
  pricing: PricingService;
  /** Model and vendor metadata shown beside the prices. */
  catalogue: CatalogueService;
}

/**
 * GET /api/pricing (spec doc 3 §2 Pricing page): public; a signed-in user sees the groups they can
 * use, a visitor those of the default group.
 */
export function pricingRoutes(app: FastifyInstance, { guards, options, pricing, catalogue }: PricingRouteDeps): void {
  // Spec doc 1 §7: the console's dashboard keeps this map (channel type -> model names) locally.
  app.get('/models', { preHandler: guards.user, schema: { tags: ['pricing'] } }, async () => ok(modelsByChannelType()));

  app.get('/pricing', { preHandler: guards.optional, schema: { tags: ['pricing'] } }, async (request) => {
    const usable = usableGroups(options, request.auth?.user.group ?? 'default');
    const groups = Object.keys(usable);
    const group_ratio = Object.fromEntries(groups.map((g) => [g, groupRatio(options, g)]));
    const usable_group = Object.fromEntries(groups.map((g) => [g, usable[g]?.desc ?? g]));
    const items = await pricing.catalogue(new Set(groups));
    // new-api's pricing answer: each model's catalogue entry (enabled ones) and the vendors they name.
    const described = await catalogue.describe(items.map((item) => item.model_name));
    const data = items.map((item) => {
      const entry = described.models.get(item.model_name);
      if (!entry) return item;
      const vendor = described.vendors.some((v) => v.id === entry.vendor_id) ? { vendor_id: entry.vendor_id } : {};
      return { ...item, ...vendor, description: entry.description, tags: entry.tags, icon: entry.icon };
    });
    const vendors = described.vendors.map(({ id, name, description, icon }) => ({ id, name, description, icon }));
    return { success: true, message: '', data, vendors, group_ratio, usable_group };
  });
}

import type { FastifyInstance } from 'fastify';
import { findOptionDefinition, type OptionsService } from '../domain/options/index.ts';
import {
  BILLING_EXPR_OPTION,
  BILLING_MODE_OPTION,
  PRICE_OPTIONS,
  type PriceOption,
  type PricingService,
} from '../domain/pricing/service.ts';
import type { authGuards } from './auth.ts';
import { ok, say } from './envelope.ts';

export interface OptionRouteDeps {
  guards: ReturnType<typeof authGuards>;
  options: OptionsService;
  pricing: PricingService;
}

const RESETTABLE_PRICE_OPTIONS = [...Object.keys(PRICE_OPTIONS), 'ImageRatio', 'AudioRatio', 'AudioCompletionRatio'];

/** /api/option/: the system settings, one key per write (spec doc 2 §7 Options); root only. */
export function optionRoutes(app: FastifyInstance, { guards, options, pricing }: OptionRouteDeps): void {
  app.get('/option/', { preHandler: guards.root, schema: { tags: ['option'] } }, async () => {
    // Price maps show what billing uses: the options with any custom-resource-owned models laid over.
    const effective = pricing.maps();
    return ok(
      options.publicList().map(({ key, value }) => {
        if (key in PRICE_OPTIONS) return { key, value: JSON.stringify(effective[key as PriceOption]) };
        if (key === BILLING_MODE_OPTION || key === BILLING_EXPR_OPTION) {
          return { key, value: JSON.stringify(options.getJson(key)) };
        }
        return { key, value };
      }),
    );
  });

  app.put<{ Body: { key: string; value: string | number | boolean } }>(
    '/option/',
    {
      preHandler: guards.root,
      schema: {
        tags: ['option'],
        body: {
          type: 'object',
          required: ['key', 'value'],
          properties: {
            key: { type: 'string', minLength: 1, maxLength: 200 },
            value: { type: ['string', 'number', 'boolean'], maxLength: 1_000_000 },
          },
        },
      },
    },
    async (request) => {
      const { key } = request.body;
      const value = String(request.body.value);
      if (findOptionDefinition(key)?.type === 'json') pricing.assertOptionEditAllowed(key, value.trim() || '{}');
      await options.set(key, value);
      return ok(undefined, say(request, { zh: '保存成功', en: 'Saved' }));
    },
  );

  app.post('/option/rest_model_ratio', { preHandler: guards.root, schema: { tags: ['option'] } }, async (request) => {
    const defaults: Record<string, string> = {};
    for (const key of RESETTABLE_PRICE_OPTIONS) {
      const definition = findOptionDefinition(key);
      if (definition) defaults[key] = definition.default;
    }
    await options.setMany(defaults);
    return ok(undefined, say(request, { zh: '重置模型倍率成功', en: 'Model ratios reset to their defaults' }));
  });
}

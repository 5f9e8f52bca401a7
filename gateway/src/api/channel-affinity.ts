import type { FastifyInstance } from 'fastify';
import { AppError, defineErrors } from '../errors.ts';
import { AffinityClearError, type ChannelAffinity } from '../relay/affinity/channel-affinity.ts';
import type { authGuards } from './auth.ts';
import { ok } from './envelope.ts';
import { text } from './schemas.ts';

export interface ChannelAffinityRouteDeps {
  guards: ReturnType<typeof authGuards>;
  affinity: ChannelAffinity;
}

export const AFFINITY_API_ERRORS = defineErrors({
  affinity_clear_target_required: {
    status: 400,
    message: {
      zh: '缺少参数：rule_name，或使用 all=true 清空全部',
      en: 'Give rule_name, or all=true to clear every key',
    },
  },
  affinity_rule_unknown: {
    status: 400,
    message: { zh: '未知规则名称：{rule}', en: 'No channel affinity rule is named {rule}' },
  },
  affinity_rule_name_not_in_keys: {
    status: 400,
    message: {
      zh: '规则 {rule} 未启用 include_rule_name，无法按规则清空缓存',
      en: 'Rule {rule} leaves its name out of its keys (include_rule_name is false): clear all instead',
    },
  },
  affinity_usage_params_required: {
    status: 400,
    message: { zh: '缺少参数：rule_name 和 key_fp', en: 'Give rule_name and key_fp' },
  },
});

/**
 * The channel affinity cache in new-api's routes: statistics and clearing (root, under /option), and the
 * prompt-cache statistics of one key (admin, under /log, read by the usage log's detail).
 */
export function channelAffinityRoutes(app: FastifyInstance, { guards, affinity }: ChannelAffinityRouteDeps): void {
  app.get(
    '/option/channel_affinity_cache',
    {
      preHandler: guards.root,
      schema: {
        tags: ['option'],
        summary: 'Channel affinity cache statistics: keys held, per rule, and the cap',
      },
    },
    async () => ok(await affinity.stats()),
  );

  app.delete<{ Querystring: { all?: string; rule_name?: string } }>(
    '/option/channel_affinity_cache',
    {
      preHandler: guards.root,
      schema: {
        tags: ['option'],
        summary: 'Forget remembered channels: every key (all=true) or those of one rule (rule_name)',
        querystring: {
          type: 'object',
          properties: { all: text('true to clear every key', 8), rule_name: text('A rule name', 200) },
        },
      },
    },
    async (request) => {
      const { all, rule_name: ruleName } = request.query;
      if (all?.trim() === 'true') return ok({ deleted: await affinity.clear() });
      const rule = ruleName?.trim();
      if (!rule) throw new AppError(AFFINITY_API_ERRORS.affinity_clear_target_required);
      try {
        return ok({ deleted: await affinity.clear(rule) });
      } catch (error) {
        if (!(error instanceof AffinityClearError)) throw error;
        throw new AppError(
          error.reason === 'unknown_rule'
            ? AFFINITY_API_ERRORS.affinity_rule_unknown
            : AFFINITY_API_ERRORS.affinity_rule_name_not_in_keys,
          { rule },
        );
      }
    },
  );

  app.get<{ Querystring: { rule_name?: string; using_group?: string; key_fp?: string } }>(
    '/log/channel_affinity_usage_cache',
    {
      preHandler: guards.admin,
      schema: {
        tags: ['log'],
        summary: 'Prompt-cache statistics of one affinity key over its time to live (hit, total, tokens)',
        querystring: {
          type: 'object',
          properties: {
            rule_name: text('The rule', 200),
            using_group: text('The group the key was used in', 200),
            key_fp: text('The key fingerprint (admin_info.channel_affinity.key_fp of a log)', 64),
          },
        },
      },
    },
    async (request) => {
      const rule = request.query.rule_name?.trim() ?? '';
      const fingerprint = request.query.key_fp?.trim() ?? '';
      if (!rule || !fingerprint) throw new AppError(AFFINITY_API_ERRORS.affinity_usage_params_required);
      return ok(await affinity.usageStats(rule, request.query.using_group?.trim() ?? '', fingerprint));
    },
  );
}

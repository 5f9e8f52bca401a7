import { Box, Typography } from '@mui/material';
import { useRecordContext, useTranslate } from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { type LogRecord, parseOther } from './log.ts';

/**
 * The expanded row of a log (spec doc 3 §2 "Clicking a row expands its detail"): the billing ratios and
 * how the quota was reached, cache tokens, media and tool surcharges, the stream outcome, the format
 * conversion chain, mapping, timing and ids; administrators also see the channels tried.
 */
export function LogDetail({ admin }: { admin: boolean }) {
  const record = useRecordContext<LogRecord>();
  const translate = useTranslate();
  const { status } = useStatus();
  if (!record) return null;
  const other = parseOther(record.other);
  const rows: Array<[string, string]> = [];
  const add = (label: string, value: unknown) => {
    if (value === undefined || value === null || value === '' || value === false) return;
    rows.push([translate(label), String(value)]);
  };
  const num = (value: unknown) => (typeof value === 'number' ? value : undefined);

  const tiered = other.billing_mode === 'tiered_expr';
  if (record.type === 2 && tiered) {
    // Priced by an expression: its ratios are 0 and say nothing; show the tier and the cost instead.
    add('log.detail.billing_mode', translate('log.detail.tiered_mode'));
    add('log.detail.matched_tier', other.matched_tier);
    add('log.detail.group_ratio', num(other.group_ratio));
    add('log.detail.billing', expressionProcess(other, translate));
    add('log.detail.quota', formatQuota(record.quota, status, 6));
    add('log.detail.expression', decodeExpression(other.expr_b64));
    if (Array.isArray(other.request_rules)) {
      for (const rule of other.request_rules as Array<{ cond?: string; multiplier?: number; matched?: boolean }>) {
        add(
          'log.detail.request_rule',
          translate(rule.matched ? 'log.detail.rule_matched' : 'log.detail.rule_unmatched', {
            cond: rule.cond,
            multiplier: rule.multiplier,
          }),
        );
      }
    }
    if (other.expr_estimate_billed) add('log.detail.estimated', translate('log.detail.estimate_billed'));
  }
  if (record.type === 2 && !tiered) {
    const perCall = num(other.model_price) !== undefined && other.model_price !== -1;
    if (perCall) {
      add('log.detail.model_price', `$${other.model_price}`);
    } else {
      add('log.detail.model_ratio', num(other.model_ratio));
      add('log.detail.completion_ratio', num(other.completion_ratio));
    }
    add('log.detail.group_ratio', num(other.group_ratio));
    if (num(other.user_group_ratio) !== undefined && other.user_group_ratio !== -1) {
      add('log.detail.user_group_ratio', other.user_group_ratio);
    }
    add('log.detail.billing', billingProcess(record, other, translate, perCall));
    add('log.detail.quota', formatQuota(record.quota, status, 6));
    if (num(other.cache_tokens)) {
      add(
        'log.detail.cache',
        translate('log.detail.tokens_at_ratio', { tokens: other.cache_tokens, ratio: other.cache_ratio }),
      );
    }
    if (num(other.cache_creation_tokens)) {
      add(
        'log.detail.cache_creation',
        translate('log.detail.tokens_at_ratio', {
          tokens: other.cache_creation_tokens,
          ratio: other.cache_creation_ratio,
        }),
      );
    }
    if (other.audio || other.ws) {
      add('log.detail.audio', `${other.audio_input ?? 0} / ${other.audio_output ?? 0}`);
      add('log.detail.text', `${other.text_input ?? 0} / ${other.text_output ?? 0}`);
    }
    if (other.image)
      add(
        'log.detail.image',
        translate('log.detail.tokens_at_ratio', { tokens: other.image_output ?? 0, ratio: other.image_ratio ?? 1 }),
      );
    if (other.web_search) add('log.detail.web_search', other.web_search_call_count ?? 1);
    if (other.file_search) add('log.detail.file_search', other.file_search_call_count ?? 1);
    add('log.detail.reasoning_effort', other.reasoning_effort);
  }
  if (other.is_model_mapped) add('log.detail.upstream_model', other.upstream_model_name);
  if (Array.isArray(other.request_conversion) && other.request_conversion.length > 0) {
    add('log.detail.conversion', other.request_conversion.join(' → '));
  }
  add('log.detail.request_path', other.request_path);
  if (record.is_stream && num(other.frt)) add('log.detail.frt', `${other.frt} ms`);
  add('log.detail.stream', record.type === 2 ? translate(record.is_stream ? 'log.stream' : 'log.not_stream') : '');
  if (admin && other.stream_status) {
    const s = other.stream_status as { status?: string; end_reason?: string; end_error?: string; errors?: string[] };
    add(
      'log.detail.stream_status',
      [s.status, s.end_reason, s.end_error, ...(s.errors ?? [])].filter(Boolean).join(' · '),
    );
  }
  if (admin && Array.isArray(other.admin_info?.use_channel)) {
    add('log.detail.channels', (other.admin_info.use_channel as string[]).join(' → '));
  }
  if (admin && other.admin_info?.is_multi_key) add('log.detail.multi_key', other.admin_info.multi_key_index);
  if (admin && other.admin_info?.route) add('log.detail.route', routeSummary(other.admin_info.route, translate));
  if (admin && other.admin_info?.local_count_tokens) add('log.detail.estimated', translate('log.detail.yes'));
  add('log.detail.reject_reason', other.reject_reason);
  add('log.detail.request_id', record.request_id);
  add('log.detail.ip', record.ip);
  add('log.detail.content', record.content);

  return (
    <Box sx={{ p: 1 }} data-testid="log-detail">
      {rows.map(([label, value]) => (
        <Box key={label} sx={{ display: 'flex', gap: 2, py: 0.25 }}>
          <Typography variant="body2" color="text.secondary" sx={{ minWidth: 160 }}>
            {label}
          </Typography>
          <Typography variant="body2" sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
            {value}
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

/** An expression-priced bill in words: the expression's cost in USD × the group ratio. */
function expressionProcess(other: Record<string, any>, translate: (key: string, options?: object) => string): string {
  const group =
    other.user_group_ratio !== undefined && other.user_group_ratio !== -1 ? other.user_group_ratio : other.group_ratio;
  const cost = typeof other.expr_cost_usd === 'number' ? `$${Number(other.expr_cost_usd.toFixed(8))}` : '-';
  return translate('log.detail.per_expression', { cost, group });
}

/** The billing expression of `other.expr_b64` (UTF-8 in base64), or undefined. */
function decodeExpression(encoded: unknown): string | undefined {
  if (typeof encoded !== 'string' || encoded === '') return undefined;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/** How the quota was reached, in words (prices per 1M tokens = ratio × 2 USD, spec doc 3 §9). */
function billingProcess(
  record: LogRecord,
  other: Record<string, any>,
  translate: (key: string, options?: object) => string,
  perCall: boolean,
): string {
  const group =
    other.user_group_ratio !== undefined && other.user_group_ratio !== -1 ? other.user_group_ratio : other.group_ratio;
  if (perCall) return translate('log.detail.per_call', { price: `$${other.model_price}`, group });
  const ratio = Number(other.model_ratio ?? 0);
  const completion = Number(other.completion_ratio ?? 1);
  return translate('log.detail.per_token', {
    prompt: record.prompt_tokens,
    completion: record.completion_tokens,
    input_price: `$${(ratio * 2).toFixed(4).replace(/\.?0+$/, '')}`,
    output_price: `$${(ratio * 2 * completion).toFixed(4).replace(/\.?0+$/, '')}`,
    group,
  });
}

/** admin_info.route (relay/routing/route-trace.ts) in words: group, tier, how the channel was picked, which attempt. */
function routeSummary(route: Record<string, unknown>, translate: (key: string, options?: object) => string): string {
  const how = String(route.how ?? '');
  const pick = translate(`log.detail.route_pick_${how}`, { weight: route.weight, total: route.tier_weight });
  const parts = [
    `#${route.channel}: ${translate('log.detail.route_value', {
      group: route.group,
      priority: route.priority,
      pick,
      attempt: Number(route.retry ?? 0) + 1,
    })}`,
  ];
  const skipped = Array.isArray(route.circuits_skipped) ? route.circuits_skipped : [];
  if (skipped.length > 0)
    parts.push(translate('log.detail.route_skipped', { channels: skipped.map((id) => `#${id}`).join(', ') }));
  if (route.probe) parts.push(translate('log.detail.route_probe'));
  return parts.join(' · ');
}

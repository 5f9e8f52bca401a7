import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { CappedMaps, KeyValueStore } from '../../cluster/types.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import { testBounded } from '../overrides/go-regexp.ts';
import type { Usage, WireFormat } from '../types.ts';
import { extractKey } from './key-sources.ts';
import type { AffinityMetrics } from './metrics.ts';
import { type AffinityRule, parseAffinityRules } from './rules.ts';

/** The capped map holding affinity key -> channel id, shared by every pod. */
const MAP = 'channel-affinity';
/** Values longer than this are stored as their hash: a prompt can be a key source. */
const MAX_VALUE_LENGTH = 128;
/** new-api's default when max_entries is 0. */
const DEFAULT_MAX_ENTRIES = 100_000;

/** The request facts a rule matches on. */
export interface AffinityRequest {
  path: string;
  model: string;
  /** The group the request is routed in first (for auto tokens, the first auto group with a channel). */
  group: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | FormData;
}

/** A request a rule applies to, and the key it is remembered under. */
export interface AffinityMatch {
  readonly rule: AffinityRule;
  readonly cacheKey: string;
  readonly ttlMs: number;
  /** The first 8 hex digits of the value's SHA-1 (new-api's key_fp): logs and usage statistics. */
  readonly keyFingerprint: string;
  /** The value shortened for display (first and last 4 characters). */
  readonly keyHint: string;
  readonly keySource: string;
  readonly group: string;
  readonly model: string;
  readonly path: string;
}

/** GET /api/option/channel_affinity_cache, in new-api's shape. */
export interface AffinityCacheStats {
  enabled: boolean;
  total: number;
  unknown: number;
  by_rule_name: Record<string, number>;
  cache_capacity: number;
  cache_algo: string;
}

/** GET /api/log/channel_affinity_usage_cache, in new-api's shape. */
export interface AffinityUsageStats {
  rule_name: string;
  using_group: string;
  key_fp: string;
  cached_token_rate_mode: string;
  hit: number;
  total: number;
  window_seconds: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  prompt_cache_hit_tokens: number;
  last_seen_at: number;
}

export interface ChannelAffinityConfig {
  maps: CappedMaps;
  kv: KeyValueStore;
  options: OptionsService;
  metrics: AffinityMetrics;
  /** 'redis' or 'memory': what the statistics call the cache's algorithm. */
  backend: 'redis' | 'memory';
  logger?: { warn(obj: object, msg: string): void } | undefined;
}

/**
 * Channel affinity (reference §4.2): requests carrying the same key (a prompt cache key, a Claude Code
 * session, a cache prefix) go to the channel that served the last one, so that the upstream's prompt
 * cache is reused. The key -> channel map lives in the cluster state, so every pod follows it.
 */
export class ChannelAffinity {
  readonly #config: ChannelAffinityConfig;
  #rulesSource: unknown;
  #rules: readonly AffinityRule[] = [];

  constructor(config: ChannelAffinityConfig) {
    this.#config = config;
  }

  /** The first rule that applies to the request and finds a key in it; undefined when affinity is off. */
  match(request: AffinityRequest): AffinityMatch | undefined {
    const { options } = this.#config;
    if (!options.getBoolean('channel_affinity_setting.enabled')) return undefined;
    const userAgent = String(request.headers['user-agent'] ?? '').toLowerCase();
    for (const rule of this.#currentRules()) {
      if (!rule.models.some((pattern) => testBounded(pattern, request.model))) continue;
      if (rule.paths.length > 0 && !rule.paths.some((pattern) => testBounded(pattern, request.path))) continue;
      if (rule.userAgentIncludes.length > 0 && !rule.userAgentIncludes.some((part) => userAgent.includes(part))) {
        continue;
      }
      for (const source of rule.keySources) {
        const value = extractKey(source, request);
        if (value === undefined) continue;
        if (rule.valuePattern && !testBounded(rule.valuePattern, value)) break;
        const ttlSeconds = rule.ttlSeconds || options.getNumber('channel_affinity_setting.default_ttl_seconds');
        return {
          rule,
          cacheKey: cacheKeyOf(rule, request, value),
          ttlMs: ttlSeconds * 1000,
          keyFingerprint: createHash('sha1').update(value).digest('hex').slice(0, 8),
          keyHint: value.length <= 12 ? value : `${value.slice(0, 4)}...${value.slice(-4)}`,
          keySource: source.label,
          group: request.group,
          model: request.model,
          path: request.path,
        };
      }
    }
    return undefined;
  }

  /** The channel the key was last served by, if the map still holds it. */
  async preferred(match: AffinityMatch): Promise<number | undefined> {
    try {
      const stored = await this.#config.maps.get(MAP, match.cacheKey);
      const id = stored === undefined ? Number.NaN : Number(stored);
      return Number.isSafeInteger(id) && id > 0 ? id : undefined;
    } catch (error) {
      // The map is an optimisation: a request goes on without it.
      this.#config.logger?.warn({ err: error }, 'channel affinity lookup failed');
      return undefined;
    }
  }

  /** Counts how the lookup went: the hit rate is hit / (hit + miss + unavailable). */
  looked(match: AffinityMatch, result: 'hit' | 'miss' | 'unavailable'): void {
    this.#config.metrics.lookup(match.rule.name, result);
  }

  /**
   * After a success: the key now points at `channelId` (its time to live starts again). `previous` is
   * what the map held; a different channel counts as a switch.
   */
  async remember(match: AffinityMatch, channelId: number, previous: number | undefined): Promise<void> {
    const { maps, options, metrics, logger } = this.#config;
    const max = options.getNumber('channel_affinity_setting.max_entries') || DEFAULT_MAX_ENTRIES;
    try {
      await maps.set(MAP, match.cacheKey, String(channelId), match.ttlMs, max);
      if (previous !== undefined && previous !== channelId) metrics.switched(match.rule.name);
    } catch (error) {
      logger?.warn({ err: error }, 'channel affinity could not be saved');
    }
  }

  async stats(): Promise<AffinityCacheStats> {
    const { maps, options, backend } = this.#config;
    const keys = await maps.keys(MAP);
    const byRule: Record<string, number> = {};
    for (const rule of this.#currentRules()) if (rule.includeRuleName) byRule[rule.name] = 0;
    let unknown = 0;
    for (const key of keys) {
      const name = key.slice(0, key.indexOf(':'));
      if (Object.hasOwn(byRule, name)) byRule[name] = (byRule[name] ?? 0) + 1;
      else unknown++;
    }
    return {
      enabled: options.getBoolean('channel_affinity_setting.enabled'),
      total: keys.length,
      unknown,
      by_rule_name: byRule,
      cache_capacity: options.getNumber('channel_affinity_setting.max_entries') || DEFAULT_MAX_ENTRIES,
      cache_algo: backend === 'redis' ? 'redis-ttl' : 'lru',
    };
  }

  /** Forgets every key, or those of one rule (which must keep its name in its keys). */
  async clear(ruleName?: string): Promise<number> {
    if (ruleName === undefined) return this.#config.maps.clear(MAP);
    const rule = this.#currentRules().find((r) => r.name === ruleName);
    if (!rule) throw new AffinityClearError('unknown_rule');
    if (!rule.includeRuleName) throw new AffinityClearError('rule_name_not_in_keys');
    return this.#config.maps.clear(MAP, `${ruleName}:`);
  }

  /** Adds a served request's usage to the key's prompt-cache statistics (a window of the rule's TTL). */
  async observeUsage(match: AffinityMatch, usage: Usage, format: WireFormat): Promise<void> {
    const { kv, logger } = this.#config;
    const key = usageKey(match.rule.name, match.group, match.keyFingerprint);
    try {
      const previous = parseUsage(await kv.get(key));
      const mode = format === 'claude-messages' ? 'cached_over_prompt_plus_cached' : 'cached_over_prompt';
      const cached = usage.cachedTokens ?? 0;
      const next: UsageCounters = {
        cached_token_rate_mode:
          previous.cached_token_rate_mode === '' || previous.cached_token_rate_mode === mode ? mode : 'mixed',
        hit: previous.hit + (cached > 0 ? 1 : 0),
        total: previous.total + 1,
        window_seconds: match.ttlMs / 1000,
        prompt_tokens: previous.prompt_tokens + usage.promptTokens,
        completion_tokens: previous.completion_tokens + usage.completionTokens,
        total_tokens: previous.total_tokens + usage.promptTokens + usage.completionTokens,
        cached_tokens: previous.cached_tokens + cached,
        prompt_cache_hit_tokens: previous.prompt_cache_hit_tokens,
        last_seen_at: Math.floor(Date.now() / 1000),
      };
      await kv.set(key, JSON.stringify(next), match.ttlMs);
    } catch (error) {
      logger?.warn({ err: error }, 'channel affinity usage statistics could not be saved');
    }
  }

  async usageStats(ruleName: string, group: string, keyFingerprint: string): Promise<AffinityUsageStats> {
    const counters = parseUsage(await this.#config.kv.get(usageKey(ruleName, group, keyFingerprint)));
    return { rule_name: ruleName, using_group: group, key_fp: keyFingerprint, ...counters };
  }

  /** The rules as the option holds them, parsed once per change (the validator refused bad ones). */
  #currentRules(): readonly AffinityRule[] {
    const source = this.#config.options.getJson<unknown>('channel_affinity_setting.rules');
    if (source !== this.#rulesSource) {
      this.#rulesSource = source;
      try {
        this.#rules = parseAffinityRules(source);
      } catch (error) {
        this.#rules = [];
        this.#config.logger?.warn({ err: error }, 'channel affinity rules are unusable; affinity is off');
      }
    }
    return this.#rules;
  }
}

/** Why a clear by rule name was refused. */
export class AffinityClearError extends Error {
  override name = 'AffinityClearError';
  readonly reason: 'unknown_rule' | 'rule_name_not_in_keys';
  constructor(reason: 'unknown_rule' | 'rule_name_not_in_keys') {
    super(reason);
    this.reason = reason;
  }
}

function cacheKeyOf(rule: AffinityRule, request: AffinityRequest, value: string): string {
  const parts: string[] = [];
  if (rule.includeRuleName) parts.push(rule.name);
  if (rule.includeModelName) parts.push(request.model);
  if (rule.includeUsingGroup) parts.push(request.group);
  parts.push(value.length > MAX_VALUE_LENGTH ? `sha256-${createHash('sha256').update(value).digest('hex')}` : value);
  return parts.join(':');
}

type UsageCounters = Omit<AffinityUsageStats, 'rule_name' | 'using_group' | 'key_fp'>;

const EMPTY_USAGE: UsageCounters = {
  cached_token_rate_mode: '',
  hit: 0,
  total: 0,
  window_seconds: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cached_tokens: 0,
  prompt_cache_hit_tokens: 0,
  last_seen_at: 0,
};

function usageKey(rule: string, group: string, fingerprint: string): string {
  return `affinity-usage:${rule}\n${group}\n${fingerprint}`;
}

function parseUsage(text: string | undefined): UsageCounters {
  if (text === undefined) return { ...EMPTY_USAGE };
  try {
    return { ...EMPTY_USAGE, ...(JSON.parse(text) as Partial<UsageCounters>) };
  } catch {
    return { ...EMPTY_USAGE };
  }
}

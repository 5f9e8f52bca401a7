import type { OptionsService } from '../../domain/options/index.ts';
import type { RoutePlan } from '../routing/route-plan.ts';
import type { Usage, WireFormat } from '../types.ts';
import type { AffinityMatch, ChannelAffinity } from './channel-affinity.ts';

/**
 * Channel affinity for one relay request: the rule that matched, the channel the map remembered, and
 * what to write back. The map is written when a channel is first picked (so that the next request with
 * the key, on any pod, finds it even while this one streams), and again after a success on another
 * channel when switch_on_success is on.
 */
export class RequestAffinity {
  readonly #service: ChannelAffinity;
  readonly #options: OptionsService;
  readonly match: AffinityMatch;
  /** The channel id the map held when the request arrived. */
  readonly remembered: number | undefined;
  #current: number | undefined;

  private constructor(service: ChannelAffinity, options: OptionsService, match: AffinityMatch, remembered?: number) {
    this.#service = service;
    this.#options = options;
    this.match = match;
    this.remembered = remembered;
    this.#current = remembered;
  }

  /** The request a rule matched (ChannelAffinity.match), with the channel the map remembers for its key. */
  static async begin(
    service: ChannelAffinity,
    options: OptionsService,
    match: AffinityMatch,
  ): Promise<RequestAffinity> {
    return new RequestAffinity(service, options, match, await service.preferred(match));
  }

  /** Counts the lookup once the plan knows whether the remembered channel can serve. */
  counted(plan: RoutePlan): void {
    const result = this.remembered === undefined ? 'miss' : plan.preferredAvailable() ? 'hit' : 'unavailable';
    this.#service.looked(this.match, result);
  }

  /** The first channel picked: the map points at it from now on (its time to live starts again). */
  async picked(channelId: number): Promise<void> {
    if (this.#current === channelId) {
      void this.#service.remember(this.match, channelId, undefined);
      return;
    }
    await this.#service.remember(this.match, channelId, undefined);
    this.#current = channelId;
  }

  /** A failure on the remembered channel ends the request when the rule says so (no failover). */
  skipsRetry(preferred: boolean): boolean {
    return preferred && this.match.rule.skipRetryOnFailure;
  }

  /** After a success: switch the key to the channel that served, and add the usage to its statistics. */
  async succeeded(channelId: number, usage: Usage, format: WireFormat): Promise<void> {
    if (channelId !== this.#current && this.#options.getBoolean('channel_affinity_setting.switch_on_success')) {
      await this.#service.remember(this.match, channelId, this.#current);
      this.#current = channelId;
    }
    await this.#service.observeUsage(this.match, usage, format);
  }

  /** What the consume log's admin_info.channel_affinity says. */
  logInfo(channelId: number, selectedGroup: string): Record<string, unknown> {
    const { match } = this;
    return {
      reason: match.rule.name,
      rule_name: match.rule.name,
      using_group: match.group,
      selected_group: selectedGroup,
      model: match.model,
      request_path: match.path,
      channel_id: channelId,
      key_source: match.keySource,
      key_hint: match.keyHint,
      key_fp: match.keyFingerprint,
      hit: this.remembered === channelId,
    };
  }
}

import type { OptionsService } from '../../domain/options/index.ts';
import type { ChannelSnapshot } from '../types.ts';

interface Policy {
  enabled?: boolean;
  all_channels?: boolean;
  channel_ids?: number[];
  channel_types?: number[];
  /** Regular expressions over the upstream model name; none means every model. */
  model_patterns?: string[];
}

const compiled = new Map<string, RegExp | null>();

function pattern(source: string): RegExp | null {
  let regexp = compiled.get(source);
  if (regexp === undefined) {
    try {
      regexp = new RegExp(source);
    } catch {
      // The option validator keeps most bad patterns out; one that slips through matches nothing.
      regexp = null;
    }
    compiled.set(source, regexp);
  }
  return regexp;
}

/**
 * Whether a chat completions request to this channel and model is sent to the upstream as a
 * Responses API call (`global.chat_completions_to_responses_policy`, reference Appendix B), for
 * models that only the Responses API serves.
 */
export function chatViaResponses(options: OptionsService, channel: ChannelSnapshot, upstreamModel: string): boolean {
  const policy = options.getJson<Policy>('global.chat_completions_to_responses_policy');
  if (!policy?.enabled) return false;
  const channelMatches =
    policy.all_channels === true ||
    (policy.channel_ids ?? []).includes(channel.id) ||
    (policy.channel_types ?? []).includes(channel.type);
  if (!channelMatches) return false;
  const patterns = policy.model_patterns ?? [];
  return patterns.length === 0 || patterns.some((source) => pattern(source)?.test(upstreamModel) === true);
}

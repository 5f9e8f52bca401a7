import { channelType } from '../../../domain/channels/registry.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';

/** A Replicate model reference: `owner/name` (the model's latest version) or `owner/name:version`. */
export function parseModelRef(model: string): { owner: string; name: string; version?: string } {
  const match = /^([\w.-]+)\/([\w.-]+)(?::([0-9a-f]{64}))?$/.exec(model);
  if (!match) throw new Error(`"${model}" is not a Replicate model (owner/name or owner/name:version)`);
  return { owner: match[1]!, name: match[2]!, ...(match[3] ? { version: match[3] } : {}) };
}

/**
 * Creates a prediction: `POST /v1/models/{owner}/{name}/predictions` (or `/v1/predictions` for a
 * pinned version). A whole answer asks Replicate to hold the request until the prediction is done
 * (`Prefer: wait`); a stream takes the prediction's stream URL (the send hook follows it).
 */
export function buildReplicateRequest(input: BuildInput): UpstreamRequest {
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const ref = parseModelRef(input.upstreamModel);
  const path = ref.version ? '/v1/predictions' : `/v1/models/${ref.owner}/${ref.name}/predictions`;
  return {
    url: `${base}${path}`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${input.key}`,
      ...(input.stream ? {} : { prefer: 'wait' }),
    },
    body: input.body,
  };
}

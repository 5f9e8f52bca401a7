import { getModelList } from '../model-list-request.ts';
import type { ListModelsInput, UpstreamRequest } from '../types.ts';
import { parseBedrockError, sendBedrock } from './errors.ts';
import { parseBedrockKey } from './key.ts';
import { signSigV4 } from './sigv4.ts';

/** Bedrock's control plane, where ListFoundationModels lives (the runtime host has no model list). */
export const bedrockControlUrl = (region: string) => `https://bedrock.${region}.amazonaws.com`;

interface ModelSummary {
  modelId?: unknown;
  outputModalities?: unknown;
  inferenceTypesSupported?: unknown;
}

/**
 * ListFoundationModels (`GET /foundation-models?byOutputModality=TEXT`), signed with SigV4 for the
 * key's region (service `bedrock`) or with the Bedrock API key as a Bearer token; the channel's base
 * URL, when set, replaces the control-plane host. Only models the relay can call are kept: text
 * output, served on demand or through an inference profile (not provisioned throughput only).
 */
export async function listBedrockModels(input: ListModelsInput): Promise<string[]> {
  const parsed = parseBedrockKey(input.key);
  const base = (input.channel.baseUrl || bedrockControlUrl(parsed.region)).replace(/\/+$/, '');
  let request: UpstreamRequest = {
    url: `${base}/foundation-models?byOutputModality=TEXT`,
    method: 'GET',
    headers: { accept: 'application/json' },
  };
  request =
    parsed.kind === 'sigv4'
      ? signSigV4(request, parsed.credentials, { region: parsed.region, service: 'bedrock' })
      : { ...request, headers: { ...request.headers, authorization: `Bearer ${parsed.apiKey}` } };
  return getModelList(request, input, { parseError: parseBedrockError, send: sendBedrock }, FOUNDATION_MODELS);
}

const FOUNDATION_MODELS = {
  read(body: unknown): string[] | undefined {
    const summaries = (body as { modelSummaries?: unknown } | null)?.modelSummaries;
    if (!Array.isArray(summaries)) return undefined;
    return (summaries as ModelSummary[]).filter(callable).map((summary) => summary.modelId as string);
  },
  expected: '{"modelSummaries":[{"modelId":…}]}',
};

const includes = (list: unknown, value: string) => Array.isArray(list) && list.includes(value);

function callable(summary: ModelSummary): boolean {
  return (
    typeof summary.modelId === 'string' &&
    summary.modelId !== '' &&
    includes(summary.outputModalities, 'TEXT') &&
    (includes(summary.inferenceTypesSupported, 'ON_DEMAND') ||
      includes(summary.inferenceTypesSupported, 'INFERENCE_PROFILE'))
  );
}

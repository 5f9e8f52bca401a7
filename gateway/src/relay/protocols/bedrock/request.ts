import type { Json } from '../../convert/types.ts';
import type { WireFormat } from '../../types.ts';
import { prepareClaudeBody } from '../anthropic/index.ts';
import type { AuthorizeInput, BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';
import { parseBedrockKey } from './key.ts';
import { bedrockModelId } from './models.ts';
import { signSigV4 } from './sigv4.ts';

/** The Anthropic API version Bedrock's InvokeModel takes in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
export const EVENT_STREAM = 'application/vnd.amazon.eventstream';

/** The Bedrock operation (path suffix) for each native format, whole and streamed. */
const OPERATIONS: Partial<Record<WireFormat, { whole: string; stream: string }>> = {
  'claude-messages': { whole: 'invoke', stream: 'invoke-with-response-stream' },
  'bedrock-converse': { whole: 'converse', stream: 'converse-stream' },
};

/** The regional Bedrock runtime endpoint. */
export const bedrockRuntimeUrl = (region: string) => `https://bedrock-runtime.${region}.amazonaws.com`;

/**
 * Finishes a body for Bedrock. Claude Messages: Claude's own defaults and thinking adapter, then
 * Bedrock's shape — no `model` (it is in the path) and no `stream` (the operation says it), the API
 * version in `anthropic_version` and the client's beta flags in `anthropic_beta`; everything else
 * (cache_control, thinking, tools) goes as the client sent it. Converse bodies come ready from the adapter.
 */
export function prepareBedrockBody(
  format: WireFormat,
  body: Json,
  context: ProviderContext,
): { body: Json; upstreamModel: string } {
  if (format !== 'claude-messages') return { body, upstreamModel: context.upstreamModel };
  const prepared = prepareClaudeBody(format, body, context);
  const { model: _model, stream: _stream, ...rest } = prepared.body;
  const next: Json = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const header = context.clientHeaders['anthropic-beta'];
  const betas = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((flag) => flag.trim())
    .filter((flag) => flag !== '');
  if (betas.length > 0 && next.anthropic_beta === undefined) next.anthropic_beta = betas;
  return { body: next, upstreamModel: prepared.upstreamModel };
}

/**
 * `POST {base}/model/{modelId}/{operation}`: InvokeModel(WithResponseStream) for Claude Messages,
 * Converse(Stream) for the rest. The model id is the Bedrock id for the key's region, percent-encoded
 * in the path as AWS SDKs send it (`:` as %3A). A Bedrock API key goes as a Bearer token here; an
 * access key pair is signed in `authorizeBedrock`, once the headers are final.
 */
export function buildBedrockRequest(input: BuildInput): UpstreamRequest {
  const { format, channel, key, upstreamModel, body, stream } = input;
  const parsed = parseBedrockKey(key);
  const base = (channel.baseUrl || bedrockRuntimeUrl(parsed.region)).replace(/\/+$/, '');
  const operations = OPERATIONS[format];
  if (!operations) throw new Error(`the Bedrock protocol has no operation for ${format}`);
  const operation = stream ? operations.stream : operations.whole;
  const modelId = bedrockModelId(upstreamModel, parsed.region);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? EVENT_STREAM : 'application/json',
  };
  if (parsed.kind === 'api-key') headers.authorization = `Bearer ${parsed.apiKey}`;
  return {
    url: `${base}/model/${encodeURIComponent(modelId)}/${operation}`,
    method: 'POST',
    headers,
    body,
  };
}

/** Signs the final request with SigV4 (service `bedrock`, the key's region) when the key is an access key pair. */
export async function authorizeBedrock(request: UpstreamRequest, input: AuthorizeInput): Promise<UpstreamRequest> {
  const parsed = parseBedrockKey(input.key);
  if (parsed.kind !== 'sigv4') return request;
  return signSigV4(request, parsed.credentials, { region: parsed.region, service: 'bedrock' });
}

import { CHANNEL_ERRORS } from '../../../domain/channels/errors.ts';
import { CHANNEL_TYPES } from '../../../domain/channels/registry.ts';
import { AppError } from '../../../errors.ts';
import { getModelList } from '../model-list-request.ts';
import type { ListModelsInput, UpstreamRequest } from '../types.ts';
import { parseVertexError, vertexChannelError } from './errors.ts';
import { isClaude } from './models.ts';
import { regionFor, vertexHost } from './region.ts';
import { credentialsOf, EXPRESS_BASE_URL } from './request.ts';
import { type AccessTokens, TokenRefused } from './token.ts';

const PAGE_SIZE = 100;
/** Pages followed at most, so a misbehaving upstream cannot keep the admin waiting forever. */
const MAX_PAGES = 20;

/**
 * Google does not list Anthropic's models on Vertex (they are enabled per project in Model Garden),
 * so the Claude names a service-account channel can reach are the registry's, beside Google's list.
 */
const CLAUDE_NAMES = CHANNEL_TYPES.filter((type) => type.protocol === 'vertex')
  .flatMap((type) => type.models)
  .filter(isClaude);

interface PublisherModelsPage {
  names: string[];
  nextPageToken: string | undefined;
}

const PUBLISHER_MODELS = {
  read(body: unknown): PublisherModelsPage | undefined {
    const answer = body as { publisherModels?: unknown; nextPageToken?: unknown } | null;
    // An empty last page may leave the list out entirely, as Google's JSON leaves out empty fields.
    const list = answer?.publisherModels ?? (answer !== null && typeof answer === 'object' ? [] : undefined);
    if (!Array.isArray(list)) return undefined;
    const names = list
      .map((model) => (model as { name?: unknown } | null)?.name)
      .filter((name): name is string => typeof name === 'string')
      .map((name) => name.split('/').pop() ?? '');
    const token = answer?.nextPageToken;
    return { names, nextPageToken: typeof token === 'string' && token !== '' ? token : undefined };
  },
  expected: '{"publisherModels":[{"name":"publishers/google/models/…"}]}',
};

/**
 * Google's publisher models (`GET {host}/v1beta1/publishers/google/models`, page by page) with the
 * service account's access token or the API key: the Gemini ones, the only Google models the relay
 * speaks to on Vertex. The host is the region's (the `other` setting's default), or the channel's base URL.
 */
export async function listVertexModels(input: ListModelsInput, tokens: AccessTokens): Promise<string[]> {
  const credentials = credentialsOf(input.key);
  const headers: Record<string, string> = { accept: 'application/json' };
  let base: string;
  if ('apiKey' in credentials) {
    headers['x-goog-api-key'] = credentials.apiKey;
    base = input.channel.baseUrl || EXPRESS_BASE_URL;
  } else {
    const region = regionFor(input.channel.other, '');
    if ('problem' in region) throw vertexChannelError('channel:region_invalid', { problem: region.problem });
    headers.authorization = `Bearer ${await accessToken(credentials.account, input, tokens)}`;
    base = input.channel.baseUrl || `https://${vertexHost(region.region)}`;
  }
  const url = `${base.replace(/\/+$/, '')}/v1beta1/publishers/google/models?pageSize=${PAGE_SIZE}`;
  const models: string[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const request: UpstreamRequest = {
      url: pageToken ? `${url}&pageToken=${encodeURIComponent(pageToken)}` : url,
      method: 'GET',
      headers,
    };
    const found = await getModelList(request, input, { parseError: parseVertexError }, PUBLISHER_MODELS);
    models.push(...found.names.filter((name) => name.startsWith('gemini-')));
    pageToken = found.nextPageToken;
    if (!pageToken) break;
  }
  return 'apiKey' in credentials ? models : [...models, ...CLAUDE_NAMES];
}

/** The cached access token; a refusal of the token endpoint is the upstream's refusal, said as such. */
async function accessToken(
  account: Parameters<AccessTokens['token']>[0],
  input: ListModelsInput,
  tokens: AccessTokens,
): Promise<string> {
  try {
    return await tokens.token(account, input.transport);
  } catch (error) {
    if (error instanceof TokenRefused) {
      throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
        status: error.status,
        detail: `Google's token endpoint refused the service account: ${error.message}`,
      });
    }
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_UNREACHABLE, {
      url: account.token_uri,
      detail: error instanceof Error ? error.message : String(error),
    });
  }
}

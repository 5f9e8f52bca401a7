import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jsonAnswer } from '../answer.ts';
import { fakeTransport } from '../test-support.ts';
import type { UpstreamRequest } from '../types.ts';
import { listVertexModels } from './listing.ts';
import { AccessTokens } from './token.ts';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: 'p1',
  private_key_id: 'kid',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: 'relay@p1.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.test/token',
});
const API_KEY = 'AQ.Ab8RN6LunitTestKey';
const model = (name: string) => ({ name: `publishers/google/models/${name}`, versionId: 'default' });

/** Google's token endpoint and two pages of publisher models. */
function google(request: UpstreamRequest) {
  if (request.url === 'https://oauth2.test/token') return jsonAnswer(200, { access_token: 'tok-1', expires_in: 3599 });
  if (!new URL(request.url).searchParams.get('pageToken')) {
    return jsonAnswer(200, {
      publisherModels: [model('gemini-2.5-pro'), model('imagen-3.0-generate-002')],
      nextPageToken: 'p2',
    });
  }
  return jsonAnswer(200, { publisherModels: [model('gemini-2.5-flash'), model('text-embedding-005')] });
}

describe('listVertexModels', () => {
  it('follows the pages at the region’s host with the access token, Gemini models and the registry’s Claude names', async () => {
    const { transport, sent } = fakeTransport(google);
    const models = await listVertexModels(
      { channel: { baseUrl: '', other: '{"default":"europe-west4"}' }, key: ACCOUNT, transport, timeoutMs: 1000 },
      new AccessTokens(),
    );
    expect(models.filter((name) => name.startsWith('gemini-'))).toEqual(['gemini-2.5-pro', 'gemini-2.5-flash']);
    expect(models).toContain('claude-sonnet-4-20250514');
    expect(sent.map((request) => request.url)).toEqual([
      'https://oauth2.test/token',
      'https://europe-west4-aiplatform.googleapis.com/v1beta1/publishers/google/models?pageSize=100',
      'https://europe-west4-aiplatform.googleapis.com/v1beta1/publishers/google/models?pageSize=100&pageToken=p2',
    ]);
    expect(sent[1]?.headers.authorization).toBe('Bearer tok-1');
  });

  it('lists only Gemini models with an API key, sent in x-goog-api-key to the global host', async () => {
    const { transport, sent } = fakeTransport(google);
    const models = await listVertexModels(
      { channel: { baseUrl: '', other: '' }, key: API_KEY, transport, timeoutMs: 1000 },
      new AccessTokens(),
    );
    expect(models).toEqual(['gemini-2.5-pro', 'gemini-2.5-flash']);
    expect(sent[0]?.url).toBe('https://aiplatform.googleapis.com/v1beta1/publishers/google/models?pageSize=100');
    expect(sent[0]?.headers['x-goog-api-key']).toBe(API_KEY);
  });

  it('gives the token endpoint’s refusal as the upstream’s, and Google’s error message', async () => {
    const refusing = fakeTransport(() =>
      jsonAnswer(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }),
    );
    await expect(
      listVertexModels(
        { channel: { baseUrl: '', other: '' }, key: ACCOUNT, transport: refusing.transport, timeoutMs: 1000 },
        new AccessTokens(),
      ),
    ).rejects.toMatchObject({
      code: 'UPSTREAM_REFUSED',
      params: { status: 400, detail: expect.stringContaining('Invalid JWT Signature.') },
    });
    const denied = fakeTransport(() =>
      jsonAnswer(403, { error: { code: 403, message: 'Permission denied.', status: 'PERMISSION_DENIED' } }),
    );
    await expect(
      listVertexModels(
        { channel: { baseUrl: '', other: '' }, key: API_KEY, transport: denied.transport, timeoutMs: 1000 },
        new AccessTokens(),
      ),
    ).rejects.toMatchObject({ code: 'UPSTREAM_REFUSED', params: { status: 403, detail: 'Permission denied.' } });
  });

  it('refuses an unusable region setting or key before any request', async () => {
    const { transport, sent } = fakeTransport(google);
    await expect(
      listVertexModels(
        { channel: { baseUrl: '', other: '{not json' }, key: ACCOUNT, transport, timeoutMs: 1000 },
        new AccessTokens(),
      ),
    ).rejects.toMatchObject({ code: 'channel:region_invalid' });
    await expect(
      listVertexModels(
        { channel: { baseUrl: '', other: '' }, key: '{"type":"x"}', transport, timeoutMs: 1000 },
        new AccessTokens(),
      ),
    ).rejects.toMatchObject({ code: 'channel:key_invalid' });
    expect(sent).toEqual([]);
  });
});

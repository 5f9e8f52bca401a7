import { createVerify, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type MockAnthropic, startMockAnthropic } from './mock-anthropic.ts';
import { type MockGemini, startMockGemini } from './mock-gemini.ts';
import { serveMock } from './mock-server.ts';
import { VeoOperations } from './veo-operations.ts';

/**
 * A local Google Cloud for Vertex AI: an OAuth token endpoint (`POST /token`) that grants an access
 * token only for a JWT assertion signed by a service account it trusts (RS256 verified with that
 * account's public key; iss, aud, scope, iat/exp checked as Google checks them), and the Vertex API
 * (`/v1/projects/{p}/locations/{l}/publishers/{google|anthropic}/models/{m}:{method}`) that refuses
 * any request without a token it issued, or for a project the token's account does not belong to, in
 * Google's error shape; express mode's project-less `/v1/publishers/google/models/{m}:{method}` takes
 * an API key it trusts instead (`x-goog-api-key` or `?key=`). The publisher model list
 * (`GET /v1beta1/publishers/google/models`, Model Garden's ListPublisherModels) takes either, and pages
 * by `pageSize`/`pageToken`. Gemini methods answer as Google's Gemini publisher and Claude's rawPredict /
 * streamRawPredict as Anthropic's Messages API — by the Gemini and Anthropic mocks behind it, whose
 * behaviour tests script through `gemini` and `anthropic`. Veo's `predictLongRunning` answers an
 * operation under the publisher model, and `fetchPredictOperation {operationName}` advances it (`veo`)
 * to done with the video inline (`bytesBase64Encoded`, as Vertex answers without a storageUri).
 */
export interface TestServiceAccount {
  /** The key file's fields, as Google's console downloads them. */
  credentials: {
    type: 'service_account';
    project_id: string;
    private_key_id: string;
    private_key: string;
    client_email: string;
    client_id: string;
    auth_uri: string;
    token_uri: string;
  };
  /** The key file's text, the channel key. */
  json: string;
  publicKey: KeyObject;
}

/** A new service account with its own RSA key pair; its token_uri is the mock's (or the given one). */
export function createServiceAccount(
  tokenUri: string,
  { project = 'tollgate-test', name = 'relay' }: { project?: string; name?: string } = {},
): TestServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const credentials = {
    type: 'service_account' as const,
    project_id: project,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: `${name}@${project}.iam.gserviceaccount.com`,
    client_id: String(100000000000000000000n + BigInt(randomBytes(6).readUIntBE(0, 6))),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
  };
  return { credentials, json: JSON.stringify(credentials), publicKey };
}

export interface RecordedVertexRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  version?: string;
  project?: string;
  location?: string;
  publisher?: string;
  model?: string;
  action?: string;
  body: any;
}

export interface MockVertex {
  url: string;
  /** The token endpoint's URL, for a key file's token_uri. */
  tokenUri: string;
  /** Requests to the Vertex API (token requests are counted apart). */
  requests: RecordedVertexRequest[];
  /** Access tokens granted, in order. */
  grants: Array<{ email: string; token: string }>;
  /** Token requests refused, with the OAuth error the mock answered. */
  refusals: string[];
  /** Trusts a service account: the token endpoint grants tokens for JWTs its key signed. */
  trust(account: TestServiceAccount): void;
  /** Trusts an API key for express mode (`/v1/publishers/google/models/…` with `x-goog-api-key` or `?key=`). */
  trustApiKey(key: string): void;
  /** Veo's operations, and how the next one ends. */
  veo: VeoOperations;
  /** The publishers behind the API, for scripting replies and usage. */
  gemini: MockGemini;
  anthropic: MockAnthropic;
  close(): Promise<void>;
}

/** Google's own token endpoint: an assertion may name it as its audience whatever host serves the mock. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const INTERNAL_KEY = 'vertex-internal';
const API_PATH =
  /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)$/;
const EXPRESS_PATH = /^\/(v1|v1beta1)\/publishers\/google\/models\/([^/:]+):([A-Za-z]+)$/;
const LOCATION = /^(global|[a-z]+-[a-z]+\d+)$/;
const LIST_PATH = /^\/(v1|v1beta1)\/publishers\/google\/models$/;

/** Google's publisher models, as ListPublisherModels names them (Gemini beside image, embedding and open models). */
export const PUBLISHER_MODELS = [
  'gemini-2.5-pro',
  'gemini-2.5-flash',
  'imagen-3.0-generate-002',
  'gemini-2.0-flash',
  'text-embedding-005',
  'gemma3',
  'gemini-2.0-flash-lite',
].map((model) => ({
  name: `publishers/google/models/${model}`,
  versionId: 'default',
  openSourceCategory: model.startsWith('gemma') ? 'GOOGLE_OWNED_OSS_WITH_GOOGLE_CHECKPOINT' : 'PROPRIETARY',
  launchStage: 'GA',
  publisherModelTemplate: `projects/{project}/locations/{location}/publishers/google/models/${model}@default`,
}));

export async function startMockVertex(): Promise<MockVertex> {
  const [geminiUp, anthropicUp] = await Promise.all([startMockGemini(), startMockAnthropic()]);
  const accounts = new Map<string, { keyId: string; publicKey: KeyObject; project: string }>();
  /** Access token → the account it was granted to. */
  const issued = new Map<string, { email: string; project: string; scopes: string[] }>();
  const apiKeys = new Set<string>();
  const requests: RecordedVertexRequest[] = [];
  const grants: MockVertex['grants'] = [];
  const refusals: string[] = [];
  const veo = new VeoOperations();
  let tokenUri = '';

  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    if (url.pathname === '/token') {
      const answer = grant(req, raw.toString(), tokenUri, accounts);
      if ('error' in answer) {
        refusals.push(answer.error);
        return json(res, 400, answer);
      }
      issued.set(answer.access_token, { email: answer.email, project: answer.project, scopes: answer.scopes });
      grants.push({ email: answer.email, token: answer.access_token });
      return json(res, 200, { access_token: answer.access_token, expires_in: 3599, token_type: 'Bearer' });
    }
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      body = raw.toString();
    }
    const route = API_PATH.exec(url.pathname);
    const record: RecordedVertexRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
    };
    if (route) {
      const [, version, project, location, publisher, model, action] = route.map((part) =>
        part === undefined ? part : decodeURIComponent(part),
      );
      Object.assign(record, { version, project, location, publisher, model, action });
    }
    const express = EXPRESS_PATH.exec(url.pathname);
    if (express) {
      const [, version, model, action] = express;
      Object.assign(record, { version, publisher: 'google', model: decodeURIComponent(model!), action });
    }
    const listing = LIST_PATH.exec(url.pathname);
    if (listing) Object.assign(record, { version: listing[1], publisher: 'google', action: 'list' });
    requests.push(record);

    const header = req.headers['x-goog-api-key'];
    const apiKey = (typeof header === 'string' ? header : undefined) ?? url.searchParams.get('key');
    if (listing && apiKey) {
      if (!apiKeys.has(apiKey)) {
        return googleError(res, 400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
      }
      return listPublisherModels(url, res);
    }
    if (express && apiKey) {
      if (!apiKeys.has(apiKey)) {
        return googleError(res, 400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
      }
      if (req.method !== 'POST' || typeof body !== 'object' || body === null) {
        return googleError(res, 400, 'Invalid JSON payload received.');
      }
      return answerGemini(record, body, url, res);
    }
    const authorization = req.headers.authorization;
    if (!authorization?.startsWith('Bearer ')) {
      return googleError(
        res,
        401,
        'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      );
    }
    const holder = issued.get(authorization.slice('Bearer '.length));
    if (!holder) {
      return googleError(
        res,
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      );
    }
    if (!holder.scopes.includes(CLOUD_PLATFORM)) {
      return googleError(res, 403, 'Request had insufficient authentication scopes.');
    }
    if (listing) {
      if (req.method !== 'GET')
        return googleError(res, 404, `The requested URL ${url.pathname} was not found on this server.`);
      return listPublisherModels(url, res);
    }
    if (!route || req.method !== 'POST') {
      return googleError(res, 404, `The requested URL ${url.pathname} was not found on this server.`);
    }
    const resource = `projects/${record.project}/locations/${record.location}/publishers/${record.publisher}/models/${record.model}`;
    if (record.project !== holder.project) {
      return googleError(
        res,
        403,
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`,
      );
    }
    if (!LOCATION.test(record.location ?? '')) {
      return googleError(res, 400, `Location ${record.location} is not supported.`);
    }
    if (typeof body !== 'object' || body === null) {
      return googleError(res, 400, 'Invalid JSON payload received.');
    }
    if (record.publisher === 'google') return answerGemini(record, body, url, res);
    if (record.publisher === 'anthropic') return answerClaude(record, body, res);
    return googleError(res, 404, `Publisher Model \`${resource}\` not found.`);
  });

  /** Google's publisher: Gemini's generateContent family, with Vertex's stricter content roles, and Veo. */
  async function answerGemini(record: RecordedVertexRequest, body: any, url: URL, res: ServerResponse) {
    if (record.action === 'predictLongRunning' || record.action === 'fetchPredictOperation') {
      return answerVeo(record, body, res);
    }
    if (record.action !== 'generateContent' && record.action !== 'streamGenerateContent') {
      return googleError(res, 400, `Method ${record.action} is not supported by publishers/google models here.`);
    }
    const contents = Array.isArray(body.contents) ? body.contents : [];
    if (contents.some((content: any) => content?.role !== 'user' && content?.role !== 'model')) {
      return googleError(res, 400, 'Please use a valid role: user, model.');
    }
    const query = url.searchParams.get('alt') === 'sse' ? '?alt=sse' : '';
    return relay(
      `${geminiUp.url}/v1beta/models/${encodeURIComponent(record.model!)}:${record.action}${query}`,
      { 'content-type': 'application/json', 'x-goog-api-key': INTERNAL_KEY },
      body,
      res,
    );
  }

  /** Veo: a new operation under the publisher model, or the state of one it made (the video inline once done). */
  function answerVeo(record: RecordedVertexRequest, body: any, res: ServerResponse) {
    const model = record.model!;
    const resource = `projects/${record.project ?? 'express-project'}/locations/${record.location ?? 'us-central1'}/publishers/google/models/${model}`;
    if (record.action === 'predictLongRunning') {
      const refused = veo.check(model, body, { gcsImages: true });
      if (refused) return googleError(res, refused.status, refused.message);
      return json(res, 200, { name: veo.create(resource, model, body).name });
    }
    const name = typeof body.operationName === 'string' ? body.operationName : '';
    const known = veo.operations.get(name);
    if (!known || known.model !== model || (record.project && !name.startsWith(`projects/${record.project}/`))) {
      return googleError(res, 404, `Operation ${name} not found for ${resource}.`);
    }
    const operation = veo.ask(name)!;
    if (!operation.done) return json(res, 200, { name });
    if (typeof operation.outcome === 'object') {
      return json(res, 200, { name, done: true, error: { code: 3, message: operation.outcome.error } });
    }
    const response =
      operation.outcome === 'filtered'
        ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt was blocked by the safety filters.'] }
        : {
            raiMediaFilteredCount: 0,
            videos: [{ bytesBase64Encoded: veo.content.toString('base64'), mimeType: 'video/mp4' }],
          };
    return json(res, 200, {
      name,
      done: true,
      response: { '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse', ...response },
    });
  }

  /** Anthropic's publisher: the Messages API with the version in the body and the model in the URL. */
  async function answerClaude(record: RecordedVertexRequest, body: any, res: ServerResponse) {
    if (record.action !== 'rawPredict' && record.action !== 'streamRawPredict') {
      return googleError(res, 400, `Method ${record.action} is not supported by publishers/anthropic models.`);
    }
    const { anthropic_version: version, ...message } = body;
    if (typeof version !== 'string' || version === '') {
      return claudeError(res, 400, 'anthropic_version: Field required');
    }
    if (message.model !== undefined) {
      return claudeError(res, 400, 'model: Extra inputs are not permitted (the model is in the URL)');
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': INTERNAL_KEY,
      'anthropic-version': '2023-06-01',
    };
    const beta = record.headers['anthropic-beta'];
    if (typeof beta === 'string') headers['anthropic-beta'] = beta;
    const stream = record.action === 'streamRawPredict' || message.stream === true;
    return relay(`${anthropicUp.url}/v1/messages`, headers, { ...message, model: record.model, stream }, res);
  }

  tokenUri = `${server.url}/token`;
  return {
    ...server,
    tokenUri,
    requests,
    grants,
    refusals,
    veo,
    trustApiKey(key) {
      apiKeys.add(key);
    },
    trust(account) {
      accounts.set(account.credentials.client_email, {
        keyId: account.credentials.private_key_id,
        publicKey: account.publicKey,
        project: account.credentials.project_id,
      });
    },
    gemini: geminiUp,
    anthropic: anthropicUp,
    async close() {
      await Promise.all([server.close(), geminiUp.close(), anthropicUp.close()]);
    },
  };
}

/** ListPublisherModels: one page of `pageSize` (default 100), the next page's token while more remain. */
function listPublisherModels(url: URL, res: ServerResponse) {
  const size = Number(url.searchParams.get('pageSize') ?? 100);
  const token = url.searchParams.get('pageToken');
  const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
  if (!Number.isInteger(size) || size < 0 || !Number.isInteger(start)) {
    return googleError(res, 400, 'Invalid page token or size.');
  }
  const publisherModels = PUBLISHER_MODELS.slice(start, start + (size || 100));
  const next = start + publisherModels.length;
  const body: Record<string, unknown> = { publisherModels };
  if (next < PUBLISHER_MODELS.length) body.nextPageToken = Buffer.from(String(next)).toString('base64url');
  json(res, 200, body);
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
};

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

/** Google's error body `{"error": {"code", "message", "status", "details"?}}`. */
function googleError(res: ServerResponse, status: number, message: string, reason?: string) {
  const error: Record<string, unknown> = { code: status, message, status: STATUS[status] ?? 'UNKNOWN' };
  if (reason) {
    error.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason,
        domain: 'googleapis.com',
        metadata: { service: 'aiplatform.googleapis.com' },
      },
    ];
  }
  json(res, status, { error });
}

/** Claude's own refusals come through rawPredict in Anthropic's shape. */
function claudeError(res: ServerResponse, status: number, message: string) {
  json(res, status, { type: 'error', error: { type: 'invalid_request_error', message } });
}

/** Passes a request to a publisher mock and its answer back as it streams. */
async function relay(url: string, headers: Record<string, string>, body: unknown, res: ServerResponse) {
  const answer = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
  if (answer.body) for await (const chunk of answer.body) res.write(chunk);
  res.end();
}

type Grant =
  | { access_token: string; email: string; project: string; scopes: string[] }
  | { error: string; error_description: string };

const refuse = (error: string, description: string): Grant => ({ error, error_description: description });

/**
 * Google's JWT-bearer grant (OAuth 2.0 for service accounts): the assertion must be an RS256 JWT
 * signed by a key of a known account (`kid`, when given, names that key), for this token endpoint,
 * asking for a scope, issued now and living at most an hour. Refusals are OAuth's `{error, error_description}`.
 */
function grant(
  req: IncomingMessage,
  text: string,
  tokenUri: string,
  accounts: Map<string, { keyId: string; publicKey: KeyObject; project: string }>,
): Grant {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    return refuse('invalid_request', 'Invalid Content-Type; expected application/x-www-form-urlencoded');
  }
  const form = new URLSearchParams(text);
  if (form.get('grant_type') !== JWT_BEARER) {
    return refuse('unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
  }
  const parts = (form.get('assertion') ?? '').split('.');
  if (parts.length !== 3) return refuse('invalid_grant', 'Invalid JWT: not a compact JWS');
  const [head, payload, signature] = parts as [string, string, string];
  let header: any;
  let claims: any;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString());
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  } catch {
    return refuse('invalid_grant', 'Invalid JWT: header or claims are not JSON');
  }
  if (header.alg !== 'RS256') return refuse('invalid_grant', `Invalid JWT: unsupported algorithm ${header.alg}`);
  const account = accounts.get(claims.iss);
  if (!account) return refuse('invalid_grant', 'Invalid grant: account not found');
  if (header.kid !== undefined && header.kid !== account.keyId)
    return refuse('invalid_grant', 'Invalid JWT Signature.');
  const signed = createVerify('RSA-SHA256')
    .update(`${head}.${payload}`)
    .verify(account.publicKey, Buffer.from(signature, 'base64url'));
  if (!signed) return refuse('invalid_grant', 'Invalid JWT Signature.');
  if (claims.aud !== tokenUri && claims.aud !== GOOGLE_TOKEN_URL) {
    return refuse('invalid_grant', 'Invalid JWT: Failed audience check.');
  }
  const now = Math.floor(Date.now() / 1000);
  const lifetime = claims.exp - claims.iat;
  if (
    typeof claims.iat !== 'number' ||
    typeof claims.exp !== 'number' ||
    claims.iat > now + 60 ||
    claims.exp <= now ||
    lifetime <= 0 ||
    lifetime > 3600
  ) {
    return refuse(
      'invalid_grant',
      'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
    );
  }
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (scopes.length === 0 || scopes.includes('')) {
    return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  }
  const token = `ya29.mock-${randomBytes(24).toString('base64url')}`;
  return { access_token: token, email: claims.iss, project: account.project, scopes };
}

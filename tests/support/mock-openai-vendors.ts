import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { MockOpenAI } from './mock-openai.ts';
import { serveMock } from './mock-server.ts';

/**
 * Vendors that speak OpenAI's API at their own paths and with their own checks (Azure, Cloudflare
 * Workers AI, Mistral, Perplexity): a front that checks what the vendor checks — path, key header,
 * fields — and refuses in the vendor's own error shape, then hands an accepted request to the OpenAI
 * mock at its OpenAI path, so answers and streams are OpenAI's.
 */
export interface VendorRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

type Verdict = { forward: string; body?: unknown } | { status: number; body: unknown; contentType?: string };

interface Vendor {
  check(request: VendorRequest): Verdict;
}

export interface VendorFront {
  url: string;
  requests: VendorRequest[];
  close(): Promise<void>;
}

export async function startVendorFront(target: MockOpenAI, vendor: Vendor): Promise<VendorFront> {
  const requests: VendorRequest[] = [];
  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://front');
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      body = raw.toString();
    }
    const request = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
    };
    requests.push(request);
    const verdict = vendor.check(request);
    if (!('forward' in verdict)) {
      res.writeHead(verdict.status, { 'content-type': verdict.contentType ?? 'application/json' });
      return void res.end(typeof verdict.body === 'string' ? verdict.body : JSON.stringify(verdict.body));
    }
    const answer = await fetch(`${target.url}${verdict.forward}`, {
      method: 'POST',
      headers: { authorization: 'Bearer vendor-front', 'content-type': 'application/json' },
      body: JSON.stringify(verdict.body ?? body),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    if (answer.body) Readable.fromWeb(answer.body as never).pipe(res);
    else res.end();
  });
  return { ...server, requests };
}

const bearer = (request: VendorRequest) => request.headers.authorization?.replace(/^Bearer /, '');

/**
 * Azure OpenAI: `/openai/deployments/{deployment}/{operation}?api-version=…` with the resource key in
 * `api-key`; deployment names have no dots (gpt-41 serves gpt-4.1). Its v1 API: `/openai/v1/{operation}`,
 * the body's model naming the deployment, refusing a dated api-version.
 */
export function azure(key: string, deployments: readonly string[]): Vendor {
  return {
    check(request) {
      const v1 = /^\/openai\/v1\/(chat\/completions|embeddings)$/.exec(request.path);
      if (v1 && /^\d/.test(request.query.get('api-version') ?? '')) {
        return {
          status: 400,
          body: {
            error: { code: 'BadRequest', message: 'The api-version query parameter is not allowed on /v1 paths.' },
          },
        };
      }
      const match = v1
        ? ([request.path, String(request.body?.model ?? ''), v1[1]] as const)
        : /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(request.path);
      if (!match || (!v1 && !request.query.get('api-version'))) {
        return { status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
      }
      if (request.headers['api-key'] !== key) {
        return {
          status: 401,
          body: {
            error: {
              code: '401',
              message:
                'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
            },
          },
        };
      }
      if (!deployments.includes(decodeURIComponent(match[1]!))) {
        return {
          status: 404,
          body: {
            error: {
              code: 'DeploymentNotFound',
              message:
                'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
            },
          },
        };
      }
      return { forward: `/v1/${match[2]}` };
    },
  };
}

/** Cloudflare's API envelope for a refusal. */
const cloudflareError = (status: number, code: number, message: string): Verdict => ({
  status,
  body: { success: false, errors: [{ code, message }], messages: [], result: null },
});

/** A few of Workers AI's models, as its model search describes them (chat, embeddings, images, speech). */
export const CLOUDFLARE_MODELS = [
  ['@cf/meta/llama-3.1-8b-instruct', 'Text Generation'],
  ['@cf/black-forest-labs/flux-1-schnell', 'Text-to-Image'],
  ['@cf/baai/bge-m3', 'Text Embeddings'],
  ['@cf/openai/whisper', 'Automatic Speech Recognition'],
  ['@cf/meta/llama-3.3-70b-instruct-fp8-fast', 'Text Generation'],
  ['@cf/qwen/qwen3-embedding-0.6b', 'Text Embeddings'],
].map(([name, task], index) => ({
  id: `00000000-0000-4000-8000-00000000000${index}`,
  source: 1,
  name,
  description: `${name} on Workers AI`,
  task: { id: `00000000-0000-4000-9000-00000000000${index}`, name: task, description: `${task} models` },
  created_at: '2024-07-23 18:00:00.000',
  tags: [],
  properties: [],
}));

/** The account's model search (`GET /client/v4/accounts/{account}/ai/models/search`), paged by `page`/`per_page`. */
function cloudflareModelSearch(request: VendorRequest): Verdict {
  const perPage = Number(request.query.get('per_page') ?? 20);
  const page = Number(request.query.get('page') ?? 1);
  if (!Number.isInteger(perPage) || !Number.isInteger(page) || perPage < 1 || page < 1) {
    return cloudflareError(400, 7003, 'Could not route: invalid pagination');
  }
  const result = CLOUDFLARE_MODELS.slice((page - 1) * perPage, page * perPage);
  return {
    status: 200,
    body: {
      success: true,
      errors: [],
      messages: [],
      result,
      result_info: { page, per_page: perPage, count: result.length, total_count: CLOUDFLARE_MODELS.length },
    },
  };
}

/**
 * Workers AI's OpenAI-compatible endpoints: `/client/v4/accounts/{account}/ai/v1/…`, a Bearer API
 * token; and the account's model search.
 */
export function cloudflare(token: string, account: string): Vendor {
  return {
    check(request) {
      const search = /^\/client\/v4\/accounts\/([^/]+)\/ai\/models\/search$/.exec(request.path);
      if (search && request.method === 'GET') {
        if (bearer(request) !== token || search[1] !== account)
          return cloudflareError(401, 10000, 'Authentication error');
        return cloudflareModelSearch(request);
      }
      const match = /^\/client\/v4\/accounts\/([^/]+)\/ai\/v1\/(chat\/completions|embeddings)$/.exec(request.path);
      if (!match) return cloudflareError(404, 7000, 'No route for that URI');
      if (bearer(request) !== token || match[1] !== account) return cloudflareError(401, 10000, 'Authentication error');
      return { forward: `/v1/${match[2]}` };
    },
  };
}

/** Mistral's chat and embedding request schemas: any other top-level field is refused. */
const MISTRAL_FIELDS: Record<string, ReadonlySet<string>> = {
  '/v1/chat/completions': new Set([
    'model',
    'messages',
    'temperature',
    'top_p',
    'max_tokens',
    'stream',
    'stop',
    'random_seed',
    'response_format',
    'tools',
    'tool_choice',
    'presence_penalty',
    'frequency_penalty',
    'n',
    'prediction',
    'parallel_tool_calls',
    'safe_prompt',
    'prompt_mode',
  ]),
  '/v1/embeddings': new Set(['model', 'input', 'encoding_format', 'output_dimension', 'output_dtype']),
};

/** The fields of a Mistral chat message, by role. */
const MISTRAL_MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content']),
  user: new Set(['role', 'content']),
  assistant: new Set(['role', 'content', 'tool_calls', 'prefix']),
  tool: new Set(['role', 'content', 'tool_call_id', 'name']),
};

/** Mistral's 422 for a field its schema does not have (pydantic's extra_forbidden). */
const extraForbidden = (loc: Array<string | number>, input: unknown): Verdict => ({
  status: 422,
  body: {
    object: 'error',
    message: { detail: [{ type: 'extra_forbidden', loc, msg: 'Extra inputs are not permitted', input }] },
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
});

/**
 * Mistral: OpenAI's paths under /v1, a Bearer key, and 422 `extra_forbidden` for every field outside
 * its schema (OpenAI's `stream_options`, `user`, `max_completion_tokens`… included, and message fields
 * such as `reasoning_content`), 400 for a tool call id that is not 9 letters and digits. Its streams
 * always end with usage, asked for or not.
 */
export function mistral(key: string): Vendor {
  return {
    check(request) {
      const fields = MISTRAL_FIELDS[request.path];
      if (!fields) return { status: 404, body: { detail: 'Not Found' } };
      if (bearer(request) !== key) return { status: 401, body: { message: 'Unauthorized', request_id: 'mock' } };
      const extra = Object.keys(request.body ?? {}).find((name) => !fields.has(name));
      if (extra) return extraForbidden(['body', extra], request.body[extra]);
      for (const [index, message] of (request.body?.messages ?? []).entries()) {
        const allowed = MISTRAL_MESSAGE_FIELDS[message?.role] ?? new Set();
        const field = Object.keys(message ?? {}).find((name) => !allowed.has(name));
        if (field) return extraForbidden(['body', 'messages', index, message.role, field], message[field]);
        const ids = [message.tool_call_id, ...(message.tool_calls ?? []).map((call: any) => call?.id)];
        const bad = ids.find((id) => id !== undefined && !/^[a-zA-Z0-9]{9}$/.test(id));
        if (bad !== undefined) {
          return {
            status: 400,
            body: {
              object: 'error',
              message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`,
              type: 'invalid_request_message_error',
              param: null,
              code: '3280',
            },
          };
        }
      }
      const body = request.body?.stream ? { ...request.body, stream_options: { include_usage: true } } : request.body;
      return { forward: request.path, body };
    },
  };
}

/** Perplexity: `/chat/completions` at the root (no /v1), a Bearer key; its gateway refuses others in HTML. */
export function perplexity(key: string): Vendor {
  return {
    check(request) {
      if (request.path !== '/chat/completions') {
        return { status: 404, contentType: 'text/html', body: '<html><body><h1>404 Not Found</h1></body></html>' };
      }
      if (bearer(request) !== key) {
        return {
          status: 401,
          contentType: 'text/html',
          body: '<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center></body></html>',
        };
      }
      return { forward: '/v1/chat/completions' };
    },
  };
}

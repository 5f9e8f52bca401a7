import { AppError } from '../../errors.ts';
import { MASK, SecretMask } from '../secret-mask.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { keyParts } from './key-parts.ts';
import type { ChannelType } from './registry.ts';

export const FETCH_MODELS_TIMEOUT_MS = 10_000;

interface Request {
  url: string;
  headers: Record<string, string>;
  /** Reads model names out of the parsed answer; undefined when it has another shape. */
  read(body: unknown): string[] | undefined;
  expected: string;
  /** The URL of the page after this answer's, for lists that come in pages. */
  next?(body: unknown): string | undefined;
}

/** Pages followed at most, so a misbehaving upstream cannot keep the admin waiting forever. */
const MAX_PAGES = 20;

/** The Workers AI tasks the relay serves: chat (text generation) and embeddings. */
const CLOUDFLARE_TASKS: ReadonlySet<string> = new Set(['Text Generation', 'Text Embeddings']);
const CLOUDFLARE_PAGE_SIZE = 100;

/**
 * Asks an upstream which models it serves, in the way its protocol does (OpenAI-style `/v1/models`,
 * Anthropic, Gemini, Ollama, Cohere, Cloudflare's model search under the account in `other`). Every
 * failure becomes an AppError that says what went wrong: never a 500.
 */
export async function fetchUpstreamModels(
  type: ChannelType,
  channel: { baseUrl: string; other: string },
  key: string,
  timeoutMs = FETCH_MODELS_TIMEOUT_MS,
): Promise<string[]> {
  const request = requestFor(type, channel, key);
  const models: string[] = [];
  let url: string | undefined = request.url;
  for (let page = 0; url !== undefined && page < MAX_PAGES; page++) {
    const answer = await getUpstreamJson(url, request.headers, key, timeoutMs);
    const found = answer ? request.read(answer.body) : undefined;
    if (!found) throw new AppError(CHANNEL_ERRORS.UPSTREAM_MODELS_UNREADABLE, { expected: request.expected });
    models.push(...found);
    url = found.length > 0 ? request.next?.(answer?.body) : undefined;
  }
  return [...new Set(models)].sort();
}

/**
 * GETs a JSON document from an upstream. Unreachable, slow and refusing upstreams become AppErrors
 * that never carry the key; an answer that is not JSON gives undefined, for the caller to name what
 * it expected.
 */
export async function getUpstreamJson(
  url: string,
  headers: Record<string, string>,
  key: string,
  timeoutMs: number,
): Promise<{ body: unknown } | undefined> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const shown = redact(url, key);
    if ((error as Error).name === 'TimeoutError') {
      throw new AppError(CHANNEL_ERRORS.UPSTREAM_TIMEOUT, { url: shown, seconds: Math.round(timeoutMs / 1000) });
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_UNREACHABLE, { url: shown, detail: redact(detail, key) });
  }
  const text = await response.text().catch(() => '');
  if (!response.ok) {
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
      status: response.status,
      detail: redact(errorDetail(text), key),
    });
  }
  try {
    return { body: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function requestFor(type: ChannelType, { baseUrl, other }: { baseUrl: string; other: string }, key: string): Request {
  switch (type.listing) {
    case 'openai':
      return {
        // A base URL that already ends in /v1 (accepted with a warning) must not get a second one.
        url:
          /\/v1$/i.test(baseUrl) && type.apiPrefix === '/v1'
            ? `${baseUrl}/models`
            : `${baseUrl}${type.apiPrefix}/models`,
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
        read: (body) => names(body, 'data', 'id'),
        expected: '{"data":[{"id":…}]}',
      };
    case 'anthropic':
      return {
        url: `${baseUrl}${/\/v1$/i.test(baseUrl) ? '' : '/v1'}/models?limit=1000`,
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', accept: 'application/json' },
        read: (body) => names(body, 'data', 'id'),
        expected: '{"data":[{"id":…}]}',
      };
    case 'gemini':
      return {
        // The key travels in a header rather than `?key=`, so it never lands in URLs or access logs.
        url: `${baseUrl}/v1beta/models?pageSize=1000`,
        headers: { 'x-goog-api-key': key, accept: 'application/json' },
        read: (body) => names(body, 'models', 'name')?.map((name) => name.replace(/^models\//, '')),
        expected: '{"models":[{"name":…}]}',
      };
    case 'ollama':
      return {
        url: `${baseUrl}/api/tags`,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        read: (body) => names(body, 'models', 'name'),
        expected: '{"models":[{"name":…}]}',
      };
    case 'cohere':
      return {
        url: `${baseUrl}/v1/models?page_size=1000`,
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
        read: (body) => names(body, 'models', 'name'),
        expected: '{"models":[{"name":…}]}',
      };
    case 'cloudflare': {
      const search = `${baseUrl}/client/v4/accounts/${encodeURIComponent(other.trim())}/ai/models/search?per_page=${CLOUDFLARE_PAGE_SIZE}`;
      return {
        url: `${search}&page=1`,
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
        read: (body) => cloudflareModels(body),
        expected: '{"result":[{"name":…,"task":{"name":…}}]}',
        // result_info says where this page ends (the API may give fewer per page than asked).
        next: (body) => {
          const info = (body as { result_info?: Record<string, unknown> } | null)?.result_info;
          const { page, per_page: perPage, total_count: total } = info ?? {};
          if (typeof page !== 'number' || typeof perPage !== 'number' || typeof total !== 'number') return undefined;
          return page * perPage < total ? `${search}&page=${page + 1}` : undefined;
        },
      };
    }
    case 'protocol':
    case 'none':
      throw new AppError(CHANNEL_ERRORS.CHANNEL_FETCH_UNSUPPORTED, { type: `${type.id} ${type.name}` });
  }
}

/** Workers AI's catalogue holds image, speech and other models too: only those the relay can serve. */
function cloudflareModels(body: unknown): string[] | undefined {
  const list = (body as { result?: unknown } | null)?.result;
  if (!Array.isArray(list)) return undefined;
  return list
    .filter((model) => CLOUDFLARE_TASKS.has((model as { task?: { name?: unknown } } | null)?.task?.name as string))
    .map((model) => (model as { name?: unknown }).name)
    .filter((name): name is string => typeof name === 'string' && name !== '');
}

function names(body: unknown, listField: string, nameField: string): string[] | undefined {
  const list = (body as Record<string, unknown> | null)?.[listField];
  if (!Array.isArray(list)) return undefined;
  const result: string[] = [];
  for (const item of list) {
    const name = (item as Record<string, unknown> | null)?.[nameField];
    if (typeof name === 'string' && name !== '') result.push(name);
  }
  return result;
}

/** The upstream's own error message when it sent one (OpenAI, Anthropic and Gemini all nest it in `error`). */
export function errorDetail(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string' && message !== '') return message.slice(0, 500);
  } catch {
    // not JSON: show the start of the text
  }
  return text.trim().slice(0, 500) || '(empty body)';
}

/**
 * Upstreams sometimes echo the key they were given; it must not reach the answer, whole, in its parts or
 * in fragments (domain/secret-mask.ts). A short key is still taken out where it appears whole.
 */
export function redact(text: string, key: string): string {
  const whole = key.length >= 4 ? text.split(key).join(MASK) : text;
  return new SecretMask(keyParts(key)).mask(whole);
}

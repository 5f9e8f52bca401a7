import { AppError } from '../../errors.ts';
import { CHANNEL_ERRORS } from './errors.ts';
import { errorDetail, redact } from './upstream-models.ts';

/** Where an Ollama channel's server is, and the bearer key of a proxy in front of it (may be empty). */
export interface OllamaServer {
  baseUrl: string;
  key: string;
}

/** A pull downloads gigabytes: it may take this long before it is given up. */
export const OLLAMA_PULL_TIMEOUT_MS = 60 * 60 * 1000;

/**
 * Ollama's model management, for the administrators of its channels (new-api's
 * `/api/channel/ollama/*`): pull a model (whole or with progress), delete one, read the version.
 * Failures become the channel errors for upstreams (unreachable, timed out, refused), key redacted.
 */
export async function pullOllamaModel(server: OllamaServer, model: string): Promise<void> {
  const response = await call(server, 'POST', '/api/pull', { model, stream: false }, OLLAMA_PULL_TIMEOUT_MS);
  const body = (await response.json().catch(() => undefined)) as { status?: unknown; error?: unknown } | undefined;
  if (body?.status !== 'success') {
    const detail = typeof body?.error === 'string' ? body.error : `status ${String(body?.status)}`;
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
      status: response.status,
      detail: redact(detail, server.key),
    });
  }
}

/** The progress lines of a pull as Ollama streams them (`{status, digest, total, completed}` …). */
export async function* pullOllamaModelProgress(
  server: OllamaServer,
  model: string,
  signal: AbortSignal,
): AsyncGenerator<Record<string, unknown>> {
  const response = await call(server, 'POST', '/api/pull', { model, stream: true }, OLLAMA_PULL_TIMEOUT_MS, signal);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body ?? []) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) yield progressLine(line, server.key);
  }
  if (buffer.trim()) yield progressLine(buffer, server.key);
}

export async function deleteOllamaModel(server: OllamaServer, model: string, timeoutMs: number): Promise<void> {
  await call(server, 'DELETE', '/api/delete', { model }, timeoutMs);
}

export async function ollamaVersion(server: OllamaServer, timeoutMs: number): Promise<string> {
  const response = await call(server, 'GET', '/api/version', undefined, timeoutMs);
  const body = (await response.json().catch(() => undefined)) as { version?: unknown } | undefined;
  if (typeof body?.version !== 'string') {
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
      status: response.status,
      detail: 'no version in the answer',
    });
  }
  return body.version;
}

/** A progress line; an `{"error": …}` line ends the pull with that reason. */
function progressLine(line: string, key: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { status: redact(line.trim(), key) };
  }
  const progress = (typeof parsed === 'object' && parsed !== null ? parsed : { status: String(parsed) }) as Record<
    string,
    unknown
  >;
  if (typeof progress.error === 'string') {
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, { status: 200, detail: redact(progress.error, key) });
  }
  return progress;
}

async function call(
  server: OllamaServer,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Response> {
  const url = `${server.baseUrl.replace(/\/+$/, '')}${path}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (server.key) headers.authorization = `Bearer ${server.key}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      throw new AppError(CHANNEL_ERRORS.UPSTREAM_TIMEOUT, { url, seconds: Math.round(timeoutMs / 1000) });
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_UNREACHABLE, { url, detail: redact(detail, server.key) });
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
      status: response.status,
      detail: redact(errorDetail(text), server.key),
    });
  }
  return response;
}

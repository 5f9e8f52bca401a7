import { CHANNEL_ERRORS } from '../../domain/channels/errors.ts';
import { errorDetail, redact } from '../../domain/channels/upstream-models.ts';
import { AppError } from '../../errors.ts';
import type { UpstreamResponse } from '../transport.ts';
import type { ListModelsInput, Provider, UpstreamRequest } from './types.ts';

/** How to read one model-list answer: the names in it, or undefined when it has another shape. */
export interface ModelListReader<T> {
  read(body: unknown): T | undefined;
  /** The shape expected, named in the error when the answer has another. */
  expected: string;
}

/**
 * Sends one model-list request and reads its JSON answer. Unreachable, slow and refusing upstreams
 * become the same AppErrors the plain listings give (the refusal in the provider's own words, via its
 * parseError), never carrying the key; an answer of another shape is UPSTREAM_MODELS_UNREADABLE.
 * `send` is the provider's own when its answers need it (Bedrock names errors in a header).
 */
export async function getModelList<T>(
  request: UpstreamRequest,
  input: Pick<ListModelsInput, 'key' | 'transport' | 'timeoutMs'>,
  provider: Pick<Provider, 'parseError' | 'send'>,
  reader: ModelListReader<T>,
): Promise<T> {
  const { key, transport, timeoutMs } = input;
  const shown = redact(request.url, key);
  const signal = AbortSignal.timeout(timeoutMs);
  let response: UpstreamResponse;
  let text: string;
  try {
    response = provider.send
      ? await provider.send(request, { transport, signal, stream: false })
      : await transport.send(request, signal);
    text = await response.body.text();
  } catch (error) {
    if (signal.aborted) {
      throw new AppError(CHANNEL_ERRORS.UPSTREAM_TIMEOUT, { url: shown, seconds: Math.round(timeoutMs / 1000) });
    }
    const detail = (error as { code?: string }).code ?? (error as Error).message;
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_UNREACHABLE, { url: shown, detail: redact(String(detail), key) });
  }
  if (response.status >= 400) {
    const message = provider.parseError(response.status, text).message || errorDetail(text);
    throw new AppError(CHANNEL_ERRORS.UPSTREAM_REFUSED, {
      status: response.status,
      detail: redact(message.slice(0, 500), key),
    });
  }
  let found: T | undefined;
  try {
    found = reader.read(JSON.parse(text));
  } catch {
    // not JSON: unreadable, as below
  }
  if (found === undefined) throw new AppError(CHANNEL_ERRORS.UPSTREAM_MODELS_UNREADABLE, { expected: reader.expected });
  return found;
}

import { Readable } from 'node:stream';
import type { UpstreamResponse } from '../../transport.ts';
import type { SendInput, UpstreamError, UpstreamRequest } from '../types.ts';

/** Bedrock's error types by HTTP status, for an error body that does not name its own. */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** `ValidationException:http://internal.amazon.com/coral/…` or `com.amazon.coral#ValidationException` → ValidationException. */
const errorTypeName = (raw: string) => raw.split(':')[0]?.split('#').pop()?.trim() ?? '';

/**
 * Bedrock answers errors as `{"message": …}` and names the error in the `x-amzn-errortype` header.
 * The header is folded into the body as `__type` (the AWS JSON protocols' own field), so that
 * parseError, which sees only the body, can name the error.
 */
export async function sendBedrock(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  const response = await input.transport.send(request, input.signal);
  const header = response.headers['x-amzn-errortype'];
  const errorType = errorTypeName(Array.isArray(header) ? (header[0] ?? '') : (header ?? ''));
  if (response.status < 400 || errorType === '') return response;
  const text = await response.body.text();
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : { message: text };
  } catch {
    body = { message: text };
  }
  return { ...response, body: textBody(JSON.stringify({ __type: errorType, ...body })) };
}

/** A body already read, readable again as the transport's bodies are. */
function textBody(text: string): UpstreamResponse['body'] {
  const bytes = Buffer.from(text);
  return Object.assign(Readable.from([bytes]), {
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  }) as unknown as UpstreamResponse['body'];
}

/** `{"__type"?, "message" | "Message"}` → the error, its Bedrock type as both type and code. */
export function parseBedrockError(status: number, text: string): UpstreamError {
  let message = '';
  let type = '';
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const found = body.message ?? body.Message;
    if (typeof found === 'string') message = found;
    if (typeof body.__type === 'string') type = errorTypeName(body.__type);
  } catch {
    message = text.slice(0, 1000);
  }
  type ||= TYPE_BY_STATUS[status] ?? 'upstream_error';
  return { status, message: message || `upstream answered HTTP ${status}`, type, code: type };
}

import type { FastifyRequest } from 'fastify';
import { assertFormFields, assertFormPartCount } from '../../bounds/multipart.ts';
import { isRecord } from '../../protocols/video-fields.ts';

/**
 * A refusal in OpenAI's error shape, `code` a stable error code; `upstream` when the upstream refused
 * a submission or did not answer, so that another channel may take it.
 */
export class VideoFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly upstream: boolean;
  constructor(code: string, message: string, status = 400, upstream = false) {
    super(message);
    this.code = code;
    this.status = status;
    this.upstream = upstream;
  }
}

export const invalidVideo = (message: string) => new VideoFailure('invalid_request', message);

/** A submission as read from JSON or multipart: its fields, and the form itself when it came as one. */
export interface Submission {
  fields: Record<string, unknown>;
  form?: FormData;
}

export async function readSubmission(request: FastifyRequest): Promise<Submission> {
  const contentType = String(request.headers['content-type'] ?? '');
  if (contentType.startsWith('multipart/form-data')) {
    if (!Buffer.isBuffer(request.body)) throw invalidVideo('the multipart body could not be read');
    assertFormPartCount(request.body, contentType);
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': contentType } }).formData();
    } catch {
      throw invalidVideo('the multipart body could not be read');
    }
    assertFormFields(form);
    const fields: Record<string, unknown> = {};
    for (const [name, value] of form) if (typeof value === 'string') fields[name] = value;
    return { fields, form };
  }
  if (!isRecord(request.body)) throw invalidVideo('the body must be a JSON object or multipart/form-data');
  return { fields: request.body };
}

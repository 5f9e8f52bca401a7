import type { Json } from '../../convert/types.ts';
import { SseParser } from '../../sse.ts';
import type { Transport, UpstreamResponse } from '../../transport.ts';
import { jsonAnswer, providerAnswer } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { workflowFailure } from './outputs.ts';

/**
 * Sends a Dify request. Agent apps answer only in streaming mode, so for a client that wants one
 * whole answer the stream is read to its end and assembled into the blocking answer chat apps give
 * (same fields), or into Dify's error body if the stream reports an error. A workflow run that failed
 * (Dify still answers HTTP 200) becomes an error answer.
 */
export async function sendDify(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  if (input.stream) return input.transport.send(request, input.signal);
  if (request.asksForStream) return assembled(request, input.transport, input.signal);
  const response = await input.transport.send(request, input.signal);
  return request.url.endsWith('/workflows/run') ? workflowOutcome(response) : response;
}

/** A workflow run answers HTTP 200 even when it failed: a failed or stopped run becomes an error answer. */
async function workflowOutcome(response: UpstreamResponse): Promise<UpstreamResponse> {
  if (response.status >= 400) return response;
  const text = await response.body.text();
  const run = eventJson({ data: text })?.data ?? {};
  if (run.status === 'failed' || run.status === 'stopped') {
    return jsonAnswer(502, { code: `workflow_${run.status}`, message: workflowFailure(run), status: 502 });
  }
  return providerAnswer(response.status, String(response.headers['content-type'] ?? ''), Buffer.from(text));
}

async function assembled(request: UpstreamRequest, transport: Transport, signal: AbortSignal) {
  const response = await transport.send(request, signal);
  if (response.status >= 400) return response;
  const parser = new SseParser();
  const answer: Json = { event: 'message', mode: 'agent-chat', answer: '', metadata: {} };
  let failure: UpstreamResponse | undefined;
  const read = (data: Json | undefined) => {
    if (!data || failure) return;
    if (data.event === 'error') {
      const status = typeof data.status === 'number' ? data.status : 500;
      failure = jsonAnswer(status, { code: data.code, message: data.message, status });
      return;
    }
    for (const field of ['task_id', 'message_id', 'conversation_id', 'created_at']) {
      if (data[field] !== undefined && answer[field] === undefined) answer[field] = data[field];
    }
    if ((data.event === 'agent_message' || data.event === 'message') && typeof data.answer === 'string') {
      answer.answer += data.answer;
    }
    // Output moderation replaces what was said so far with its own text.
    if (data.event === 'message_replace' && typeof data.answer === 'string') answer.answer = data.answer;
    if (data.event === 'message_end' && data.metadata) answer.metadata = data.metadata;
  };
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    for (const event of parser.push(chunk)) read(eventJson(event));
  }
  for (const event of parser.end()) read(eventJson(event));
  if (failure) return failure;
  answer.id = answer.message_id;
  return jsonAnswer(200, answer);
}

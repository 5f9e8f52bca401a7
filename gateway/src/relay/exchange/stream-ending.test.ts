import { describe, expect, it } from 'vitest';
import { jsonEvent, sseFrames } from '../sse.ts';
import type { WireFormat } from '../types.ts';
import { STREAM_ENDINGS, StreamEnding, type StreamEndReason } from './stream-ending.ts';

const text = (format: WireFormat, reason: StreamEndReason = 'quota_exhausted') =>
  Buffer.from(sseFrames(new StreamEnding(format).events(reason))).toString();

describe('the final events of a stream the gateway ends, in the client’s format', () => {
  it('is an OpenAI error chunk and then [DONE] for chat and completions', () => {
    const expected =
      'data: {"error":{"message":"quota exhausted: the answer was cut off where the remaining quota ends",' +
      '"type":"insufficient_quota","param":null,"code":"quota_exhausted"}}\n\ndata: [DONE]\n\n';
    expect(text('openai-chat')).toBe(expected);
    expect(text('openai-completions')).toBe(expected);
    expect(text('openai-chat', 'upstream_reset')).toBe(
      `data: {"error":{"message":"${STREAM_ENDINGS.upstream_reset.message}","type":"upstream_error",` +
        '"param":null,"code":"upstream_reset"}}\n\ndata: [DONE]\n\n',
    );
  });

  it('is an error event for Claude, typed by the ending', () => {
    expect(text('claude-messages')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"permission_error","message":"quota exhausted: ' +
        'the answer was cut off where the remaining quota ends"}}\n\n',
    );
    for (const reason of ['upstream_reset', 'upstream_timeout', 'draining'] as const) {
      const [frame] = text('claude-messages', reason).split('\n\n');
      expect(frame?.startsWith('event: error\ndata: ')).toBe(true);
      const body = JSON.parse(frame!.slice('event: error\ndata: '.length));
      expect(body).toMatchObject({ type: 'error', error: { message: STREAM_ENDINGS[reason].message } });
      expect(body.error.type).toMatch(/_error$/);
    }
  });

  it('is an error event then response.failed for Responses, naming the response its stream announced', () => {
    const ending = new StreamEnding('openai-responses');
    ending.observe([
      jsonEvent(
        { type: 'response.created', response: { id: 'resp_1', created_at: 7, model: 'm', status: 'in_progress' } },
        'response.created',
      ),
    ]);
    const [error, failed] = ending.events('upstream_timeout');
    expect(error?.event).toBe('error');
    expect(JSON.parse(error!.data)).toEqual({
      type: 'error',
      code: 'upstream_timeout',
      message: STREAM_ENDINGS.upstream_timeout.message,
      param: null,
    });
    expect(failed?.event).toBe('response.failed');
    expect(JSON.parse(failed!.data)).toEqual({
      type: 'response.failed',
      response: {
        id: 'resp_1',
        created_at: 7,
        model: 'm',
        object: 'response',
        status: 'failed',
        error: { code: 'upstream_timeout', message: STREAM_ENDINGS.upstream_timeout.message },
      },
    });
  });

  it('is an error object in Gemini’s shape as the last chunk', () => {
    const gemini = JSON.parse(text('gemini-generate').slice('data: '.length));
    expect(gemini).toMatchObject({
      error: { code: 403, status: 'PERMISSION_DENIED', details: [{ reason: 'quota_exhausted' }] },
    });
    const reset = JSON.parse(text('gemini-generate', 'draining').slice('data: '.length));
    expect(reset).toMatchObject({ error: { code: 503, message: STREAM_ENDINGS.draining.message } });
  });
});

import { describe, expect, it } from 'vitest';
import { sseFrames } from '../sse.ts';
import { QUOTA_EXHAUSTED, streamErrorEvents } from './ending.ts';

const text = (format: Parameters<typeof streamErrorEvents>[0]) =>
  Buffer.from(sseFrames(streamErrorEvents(format, QUOTA_EXHAUSTED))).toString();

describe('the final event of a cut stream, in the client’s format', () => {
  it('is an OpenAI error chunk and then [DONE] for chat and completions', () => {
    const expected =
      'data: {"error":{"message":"quota exhausted: the answer was cut off where the remaining quota ends",' +
      '"type":"insufficient_quota","param":null,"code":"quota_exhausted"}}\n\ndata: [DONE]\n\n';
    expect(text('openai-chat')).toBe(expected);
    expect(text('openai-completions')).toBe(expected);
  });

  it('is an error event for Claude and for Responses, an error object for Gemini', () => {
    expect(text('claude-messages')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"permission_error","message":"quota exhausted: ' +
        'the answer was cut off where the remaining quota ends"}}\n\n',
    );
    expect(text('openai-responses')).toMatch(/^event: error\ndata: \{"type":"error","code":"quota_exhausted",/);
    const gemini = JSON.parse(text('gemini-generate').slice('data: '.length));
    expect(gemini).toMatchObject({
      error: { code: 403, status: 'PERMISSION_DENIED', details: [{ reason: 'quota_exhausted' }] },
    });
  });
});

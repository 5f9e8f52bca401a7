import { describe, expect, it } from 'vitest';
import type { ConvertContext } from '../../../convert/types.ts';
import { geminiAdapter } from './index.ts';

const ctx: ConvertContext = { model: 'my-model', upstreamModel: 'gemini-2.5-flash', stream: false };

const usageMetadata = {
  promptTokenCount: 100,
  candidatesTokenCount: 20,
  thoughtsTokenCount: 30,
  cachedContentTokenCount: 40,
  totalTokenCount: 150,
};

describe('Gemini answer → hub', () => {
  it('maps text, thoughts, signature, finish and usage', () => {
    const hub = geminiAdapter.responseToHub(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'Let me think', thought: true },
                { text: 'The answer', thoughtSignature: 'sig' },
                { text: ' is 42.' },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata,
        modelVersion: 'gemini-2.5-flash',
        responseId: 'abc',
      },
      ctx,
    );
    expect(hub).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'my-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'The answer is 42.',
            reasoning_content: 'Let me think',
            reasoning_signature: 'sig',
          },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 50,
        total_tokens: 150,
        prompt_tokens_details: { cached_tokens: 40 },
        completion_tokens_details: { reasoning_tokens: 30 },
      },
    });
  });

  it('maps function calls to tool_calls with synthesised ids and finish tool_calls', () => {
    const hub = geminiAdapter.responseToHub(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: 'first' },
                { functionCall: { name: 'b' } },
              ],
            },
            finishReason: 'STOP',
          },
        ],
        responseId: 'r9',
      },
      ctx,
    );
    expect(hub.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        reasoning_signature: 'first',
        tool_calls: [
          { id: 'call_r9_0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'call_r9_1', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    expect(hub.usage).toBeUndefined();
    // Without a responseId the calls still get ids unique to the answer.
    const anonymous = geminiAdapter.responseToHub(
      { candidates: [{ content: { parts: [{ functionCall: { name: 'a' } }] }, finishReason: 'STOP' }] },
      ctx,
    );
    expect(anonymous.choices[0].message.tool_calls[0].id).toMatch(/^call_[A-Za-z0-9]+_0$/);
  });

  it('maps finish reasons', () => {
    const finish = (finishReason: string) =>
      geminiAdapter.responseToHub({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason }] }, ctx)
        .choices[0].finish_reason;
    expect(finish('STOP')).toBe('stop');
    expect(finish('MAX_TOKENS')).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']) {
      expect(finish(reason)).toBe('content_filter');
    }
    expect(finish('MALFORMED_FUNCTION_CALL')).toBe('stop');
    expect(finish('OTHER')).toBe('stop');
  });

  it('answers a blocked prompt with an empty content_filter choice, and renders generated images', () => {
    const blocked = geminiAdapter.responseToHub(
      { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } },
      ctx,
    );
    expect(blocked.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null },
    ]);
    expect(blocked.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    const image = geminiAdapter.responseToHub(
      {
        candidates: [
          {
            content: { parts: [{ text: 'Here: ' }, { inlineData: { mimeType: 'image/png', data: 'iVBO' } }] },
            finishReason: 'STOP',
          },
        ],
      },
      ctx,
    );
    expect(image.choices[0].message.content).toBe('Here: ![image](data:image/png;base64,iVBO)');
  });

  it('keeps several candidates as choices', () => {
    const hub = geminiAdapter.responseToHub(
      {
        candidates: [
          { content: { parts: [{ text: 'a' }] }, finishReason: 'STOP', index: 0 },
          { content: { parts: [{ text: 'b' }] }, finishReason: 'MAX_TOKENS', index: 1 },
        ],
      },
      ctx,
    );
    expect(hub.choices.map((c: any) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'a', 'stop'],
      [1, 'b', 'length'],
    ]);
  });
});

describe('hub answer → Gemini', () => {
  it('maps message, reasoning, tool calls, finish and usage', () => {
    const gemini = geminiAdapter.responseFromHub(
      {
        id: 'chatcmpl-xyz',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Calling.',
              reasoning_content: 'hmm',
              reasoning_signature: 'sig',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: {
          prompt_tokens: 100,
          completion_tokens: 50,
          total_tokens: 150,
          prompt_tokens_details: { cached_tokens: 40 },
          completion_tokens_details: { reasoning_tokens: 30 },
        },
      },
      ctx,
    );
    expect(gemini).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'hmm', thought: true },
              { text: 'Calling.' },
              { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'sig' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: usageMetadata,
      modelVersion: 'my-model',
      responseId: 'xyz',
    });
  });

  it('maps finish reasons and an empty answer', () => {
    const finish = (finish_reason: string | null) =>
      geminiAdapter.responseFromHub({ choices: [{ message: { content: '' }, finish_reason }] }, ctx).candidates[0];
    expect(finish('length').finishReason).toBe('MAX_TOKENS');
    expect(finish('content_filter').finishReason).toBe('SAFETY');
    expect(finish('stop')).toEqual({
      content: { role: 'model', parts: [{ text: '' }] },
      finishReason: 'STOP',
      index: 0,
    });
  });

  it('round-trips answers both ways', () => {
    const gemini = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'plan', thought: true },
              { text: 'Done.' },
              { functionCall: { name: 'f', args: { q: 'x' } }, thoughtSignature: 's' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata,
      modelVersion: 'my-model',
      responseId: 'r1',
    };
    expect(geminiAdapter.responseFromHub(geminiAdapter.responseToHub(gemini, ctx), ctx)).toEqual(gemini);
    const hub = {
      id: 'chatcmpl-r2',
      object: 'chat.completion',
      created: 5,
      model: 'my-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi', reasoning_content: 'r', reasoning_signature: 's' },
          finish_reason: 'length',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 3,
        completion_tokens: 4,
        total_tokens: 7,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    };
    expect(geminiAdapter.responseToHub(geminiAdapter.responseFromHub(hub, ctx), ctx)).toEqual({
      ...hub,
      created: expect.any(Number),
    });
  });
});

describe('errors', () => {
  it('renders Google error bodies with the status string for the HTTP status', () => {
    const body = (status: number, code: string | null = null) =>
      geminiAdapter.errorBody({ status, message: 'm', type: 't', code });
    expect(body(400)).toEqual({ error: { code: 400, message: 'm', status: 'INVALID_ARGUMENT' } });
    expect(body(401).error.status).toBe('UNAUTHENTICATED');
    expect(body(403).error.status).toBe('PERMISSION_DENIED');
    expect(body(404).error.status).toBe('NOT_FOUND');
    expect(body(429).error.status).toBe('RESOURCE_EXHAUSTED');
    expect(body(500).error.status).toBe('INTERNAL');
    expect(body(502).error.status).toBe('INTERNAL');
    expect(body(503).error.status).toBe('UNAVAILABLE');
    expect(body(504).error.status).toBe('DEADLINE_EXCEEDED');
    expect(body(402).error.status).toBe('FAILED_PRECONDITION');
    expect(body(403, 'insufficient_user_quota').error.details).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'insufficient_user_quota', domain: 'tollgate' },
    ]);
  });
});

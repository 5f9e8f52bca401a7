import { describe, expect, it } from 'vitest';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { jsonAnswer } from '../answer.ts';
import type { UpstreamRequest } from '../types.ts';
import { dashscopeImagesAdapter } from './convert/images.ts';
import { dashscopeRerankAdapter } from './convert/rerank.ts';
import { aliProvider } from './index.ts';
import { IMAGE_TASK_LIMITS } from './send.ts';

const ctx = { model: 'gte-rerank', upstreamModel: 'gte-rerank', stream: false };
const channel = { id: 1, type: 17, baseUrl: 'https://dash.example', other: '' } as ChannelSnapshot;
const build = (format: Parameters<typeof aliProvider.buildRequest>[0]['format']) =>
  aliProvider.buildRequest({
    format,
    channel,
    key: 'sk-1',
    upstreamModel: 'm',
    body: '{}',
    stream: false,
    options: undefined as never,
    clientHeaders: {},
  });

describe('Ali DashScope', () => {
  it('speaks the compatible mode for chat, the native services for rerank and images', () => {
    expect(aliProvider.nativeFormat('openai-chat')).toBe('openai-chat');
    expect(aliProvider.nativeFormat('claude-messages')).toBe('openai-chat');
    expect(aliProvider.nativeFormat('rerank')).toBe('dashscope-rerank');
    expect(aliProvider.nativeFormat('openai-images')).toBe('dashscope-images');
    expect(build('openai-chat').url).toBe('https://dash.example/compatible-mode/v1/chat/completions');
    expect(build('dashscope-rerank')).toMatchObject({
      url: 'https://dash.example/api/v1/services/rerank/text-rerank/text-rerank',
      headers: { authorization: 'Bearer sk-1' },
    });
    const images = build('dashscope-images');
    expect(images.url).toBe('https://dash.example/api/v1/services/aigc/text2image/image-synthesis');
    expect(images.headers['x-dashscope-async']).toBe('enable');
  });

  it('converts rerank both ways and bills its total tokens', () => {
    expect(
      dashscopeRerankAdapter.requestFromHub(
        { model: 'gte-rerank', query: 'q', documents: ['a', { text: 'b' }], top_n: 1, return_documents: false },
        ctx,
      ),
    ).toEqual({
      model: 'gte-rerank',
      input: { query: 'q', documents: ['a', 'b'] },
      parameters: { return_documents: false, top_n: 1 },
    });
    const answer = {
      output: { results: [{ index: 1, relevance_score: 0.9 }] },
      usage: { total_tokens: 7 },
      request_id: 'r',
    };
    expect(dashscopeRerankAdapter.responseToHub(answer, ctx)).toEqual({
      id: 'r',
      model: 'gte-rerank',
      results: [{ index: 1, relevance_score: 0.9 }],
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    expect(aliProvider.usageFromBody('dashscope-rerank', answer)).toEqual({ promptTokens: 7, completionTokens: 0 });
  });

  it('converts images: size as W*H, results as URLs', () => {
    expect(
      dashscopeImagesAdapter.requestFromHub({ model: 'wanx-v1', prompt: 'p', n: 2, size: '720x1280' }, ctx),
    ).toEqual({
      model: 'wanx-v1',
      input: { prompt: 'p' },
      parameters: { n: 2, size: '720*1280' },
    });
    expect(
      dashscopeImagesAdapter.responseToHub(
        { output: { results: [{ url: 'https://u/1.png' }, { code: 'DataInspectionFailed' }] } },
        ctx,
      ).data,
    ).toEqual([{ url: 'https://u/1.png' }]);
  });

  it('reads DashScope errors and the compatible mode ones', () => {
    expect(
      aliProvider.parseError(401, '{"code":"InvalidApiKey","message":"Invalid API-key provided.","request_id":"x"}'),
    ).toEqual({
      status: 401,
      message: 'Invalid API-key provided.',
      type: 'dashscope_error',
      code: 'InvalidApiKey',
    });
    expect(
      aliProvider.parseError(400, '{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}').message,
    ).toBe('bad');
  });
});

describe('the image task', () => {
  const request = (() => {
    const built = build('dashscope-images');
    return { ...built, headers: { ...built.headers, 'x-dashscope-workspace': 'ws-1' } };
  })();
  const send = (answers: Array<ReturnType<typeof jsonAnswer>>, signal = new AbortController().signal) => {
    const sent: UpstreamRequest[] = [];
    const transport = {
      send: async (r: UpstreamRequest) => {
        sent.push(r);
        return answers.shift() ?? jsonAnswer(200, { output: { task_status: 'RUNNING' } });
      },
    } as unknown as Transport;
    return { sent, answer: aliProvider.send!(request, { channel, key: 'sk-1', transport, signal, stream: false }) };
  };

  it('polls the task until it has succeeded and answers the task', async () => {
    IMAGE_TASK_LIMITS.firstPollMs = 1;
    const { sent, answer } = send([
      jsonAnswer(200, { output: { task_id: 't-1', task_status: 'PENDING' } }),
      jsonAnswer(200, { output: { task_id: 't-1', task_status: 'RUNNING' } }),
      jsonAnswer(200, { output: { task_id: 't-1', task_status: 'SUCCEEDED', results: [{ url: 'https://u' }] } }),
    ]);
    const done = await answer;
    expect(done.status).toBe(200);
    expect(await done.body.json()).toMatchObject({ output: { task_status: 'SUCCEEDED' } });
    expect(sent.slice(1).map((r) => [r.method, r.url, r.headers])).toEqual([
      [
        'GET',
        'https://dash.example/api/v1/tasks/t-1',
        { authorization: 'Bearer sk-1', 'x-dashscope-workspace': 'ws-1' },
      ],
      [
        'GET',
        'https://dash.example/api/v1/tasks/t-1',
        { authorization: 'Bearer sk-1', 'x-dashscope-workspace': 'ws-1' },
      ],
    ]);
  });

  it('answers a failed task with its reason, and gives up after the bounded wait', async () => {
    IMAGE_TASK_LIMITS.firstPollMs = 1;
    const failed = await send([
      jsonAnswer(200, { output: { task_id: 't-2', task_status: 'PENDING' } }),
      jsonAnswer(200, {
        output: { task_id: 't-2', task_status: 'FAILED', code: 'DataInspectionFailed', message: 'unsafe' },
      }),
    ]).answer;
    expect([failed.status, await failed.body.json()]).toEqual([
      400,
      { code: 'DataInspectionFailed', message: 'unsafe' },
    ]);
    const limits = { ...IMAGE_TASK_LIMITS };
    Object.assign(IMAGE_TASK_LIMITS, { maxWaitMs: 30, maxPollMs: 5 });
    try {
      const slow = await send([jsonAnswer(200, { output: { task_id: 't-3', task_status: 'PENDING' } })]).answer;
      expect(slow.status).toBe(504);
    } finally {
      Object.assign(IMAGE_TASK_LIMITS, limits);
    }
  });

  it('stops polling when the client goes away', async () => {
    IMAGE_TASK_LIMITS.firstPollMs = 1000;
    const abort = new AbortController();
    const { answer } = send([jsonAnswer(200, { output: { task_id: 't-4', task_status: 'PENDING' } })], abort.signal);
    setTimeout(() => abort.abort(), 10);
    await expect(answer).rejects.toThrow(/abort/i);
    IMAGE_TASK_LIMITS.firstPollMs = 500;
  });
});

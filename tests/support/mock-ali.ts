import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local DashScope: the native text-rerank service, text-to-image as an asynchronous task (the
 * POST must carry `X-DashScope-Async: enable`; `GET /api/v1/tasks/{id}` reports PENDING, RUNNING,
 * then SUCCEEDED with result URLs), Wan video synthesis as the same kind of task (SUCCEEDED with a
 * `video_url` this mock serves without auth, as OSS signed links are; FAILED when created while
 * `failNextVideo` is set), and the compatible mode's chat completions. Every API call needs
 * `Authorization: Bearer <key>`; errors are DashScope's `{code, message, request_id}`.
 */
export interface RecordedAliRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MockAli {
  url: string;
  requests: RecordedAliRequest[];
  /** How many polls a task answers RUNNING before it has SUCCEEDED. */
  pollsBeforeDone: number;
  /** The next video task fails (DataInspectionFailed) instead of finishing. */
  failNextVideo: boolean;
  /** The bytes every finished video is. */
  videoContent: Buffer;
  close(): Promise<void>;
}

const RERANK = '/api/v1/services/rerank/text-rerank/text-rerank';
const IMAGES = '/api/v1/services/aigc/text2image/image-synthesis';
const VIDEOS = '/api/v1/services/aigc/video-generation/video-synthesis';
const VIDEO_RESOLUTIONS = ['480P', '720P', '1080P'];

interface VideoTask {
  polls: number;
  fails: boolean;
  duration: number;
  resolution: string;
}
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockAli(key: string): Promise<MockAli> {
  const requests: RecordedAliRequest[] = [];
  const tasks = new Map<string, { polls: number; n: number; prompt: string; size: string }>();
  const videos = new Map<string, VideoTask>();
  const mock = {
    pollsBeforeDone: 1,
    failNextVideo: false,
    videoContent: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(32)]),
  };
  let baseUrl = '';
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const file = /^\/oss\/([^/]+)\.mp4$/.exec(path);
    if (req.method === 'GET' && file) {
      const video = videos.get(file[1] ?? '');
      const done = video !== undefined && !video.fails && video.polls > mock.pollsBeforeDone;
      res.writeHead(done ? 200 : 404, { 'content-type': done ? 'video/mp4' : 'text/plain' });
      return void res.end(done ? mock.videoContent : 'NoSuchKey');
    }
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      return fail(res, 400, 'InvalidParameter', 'The request body is not valid JSON');
    }
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (req.headers.authorization !== `Bearer ${key}`) {
      if (path.startsWith('/compatible-mode/')) {
        return json(res, 401, {
          error: { message: 'Incorrect API key provided. ', type: 'invalid_request_error', code: 'invalid_api_key' },
        });
      }
      return fail(res, 401, 'InvalidApiKey', 'Invalid API-key provided.');
    }
    if (req.method === 'POST' && path === RERANK) return rerank(res, body);
    if (req.method === 'POST' && path === IMAGES) {
      if (req.headers['x-dashscope-async'] !== 'enable') {
        return fail(res, 403, 'AccessDenied', 'current user api does not support synchronous calls');
      }
      const prompt = body?.input?.prompt;
      if (typeof prompt !== 'string' || prompt === '')
        return fail(res, 400, 'InvalidParameter', 'input.prompt is required');
      const id = `${randomBytes(4).toString('hex')}-${randomBytes(2).toString('hex')}`;
      tasks.set(id, { polls: 0, n: body.parameters?.n ?? 1, prompt, size: body.parameters?.size ?? '1024*1024' });
      return json(res, 200, { output: { task_status: 'PENDING', task_id: id }, request_id: requestId() });
    }
    if (req.method === 'POST' && path === VIDEOS) {
      if (req.headers['x-dashscope-async'] !== 'enable') {
        return fail(res, 403, 'AccessDenied', 'current user api does not support synchronous calls');
      }
      const model = String(body?.model ?? '');
      if (!/^wanx?2\.\d/.test(model)) return fail(res, 400, 'InvalidParameter', `Model not exist: ${model}`);
      const input = body?.input ?? {};
      const parameters = body?.parameters ?? {};
      if (model.includes('t2v') && (typeof input.prompt !== 'string' || input.prompt === '')) {
        return fail(res, 400, 'InvalidParameter', 'input.prompt is required');
      }
      if (model.includes('i2v') && typeof input.img_url !== 'string') {
        return fail(res, 400, 'InvalidParameter', 'input.img_url is required');
      }
      if (parameters.resolution !== undefined && !VIDEO_RESOLUTIONS.includes(parameters.resolution)) {
        return fail(res, 400, 'InvalidParameter', 'parameters.resolution is invalid');
      }
      if (parameters.size !== undefined && !/^\d+\*\d+$/.test(parameters.size)) {
        return fail(res, 400, 'InvalidParameter', 'parameters.size must be width*height');
      }
      const id = `${randomBytes(4).toString('hex')}-${randomBytes(2).toString('hex')}`;
      videos.set(id, {
        polls: 0,
        fails: mock.failNextVideo,
        duration: parameters.duration ?? 5,
        resolution: parameters.resolution ?? '720P',
      });
      mock.failNextVideo = false;
      return json(res, 200, { output: { task_status: 'PENDING', task_id: id }, request_id: requestId() });
    }
    const taskMatch = /^\/api\/v1\/tasks\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && taskMatch && videos.has(decodeURIComponent(taskMatch[1] ?? ''))) {
      const id = decodeURIComponent(taskMatch[1] ?? '');
      const video = videos.get(id)!;
      video.polls++;
      const ended = video.polls > mock.pollsBeforeDone;
      const status = !ended ? 'RUNNING' : video.fails ? 'FAILED' : 'SUCCEEDED';
      return json(res, 200, {
        request_id: requestId(),
        output: {
          task_id: id,
          task_status: status,
          submit_time: '2025-09-01 10:00:00.000',
          ...(status === 'SUCCEEDED'
            ? { end_time: '2025-09-01 10:02:00.000', video_url: `${baseUrl}/oss/${id}.mp4`, orig_prompt: 'x' }
            : {}),
          ...(status === 'FAILED'
            ? { code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' }
            : {}),
        },
        ...(status === 'SUCCEEDED'
          ? { usage: { video_duration: video.duration, video_ratio: video.resolution, video_count: 1 } }
          : {}),
      });
    }
    if (req.method === 'GET' && taskMatch) {
      const id = decodeURIComponent(taskMatch[1] ?? '');
      const task = tasks.get(id);
      if (!task) return fail(res, 404, 'InvalidParameter', `task ${id} does not exist`);
      task.polls++;
      const done = task.polls > mock.pollsBeforeDone;
      return json(res, 200, {
        request_id: requestId(),
        output: {
          task_id: id,
          task_status: done ? 'SUCCEEDED' : 'RUNNING',
          submit_time: '2025-01-08 16:03:59.840',
          ...(done
            ? {
                end_time: '2025-01-08 16:04:10.660',
                results: Array.from({ length: task.n }, (_, i) => ({
                  orig_prompt: task.prompt,
                  actual_prompt: `${task.prompt}, detailed`,
                  url: `https://dashscope-result.example/${id}-${i}.png`,
                })),
                task_metrics: { TOTAL: task.n, SUCCEEDED: task.n, FAILED: 0 },
              }
            : { task_metrics: { TOTAL: task.n, SUCCEEDED: 0, FAILED: 0 } }),
        },
        ...(done ? { usage: { image_count: task.n } } : {}),
      });
    }
    if (req.method === 'POST' && path === '/compatible-mode/v1/chat/completions') {
      const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
      return json(res, 200, {
        id: `chatcmpl-${requestId()}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body?.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Qwen.' }, finish_reason: 'stop' }],
        usage,
      });
    }
    return fail(res, 404, 'NotFound', `no such API: ${req.method} ${path}`);
  });
  baseUrl = server.url;
  return Object.assign(mock, { ...server, requests });
}

const requestId = () =>
  `${randomBytes(4).toString('hex')}-${randomBytes(2).toString('hex')}-${randomBytes(6).toString('hex')}`;

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function fail(res: ServerResponse, status: number, code: string, message: string) {
  json(res, status, { code, message, request_id: requestId() });
}

function rerank(res: ServerResponse, body: any) {
  const query = body?.input?.query;
  const documents = body?.input?.documents;
  if (typeof query !== 'string' || !Array.isArray(documents) || documents.some((d: unknown) => typeof d !== 'string')) {
    return fail(res, 400, 'InvalidParameter', 'input.query and input.documents (strings) are required');
  }
  const words = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  const scored = documents.map((text: string, index: number) => {
    const hits = text
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => words.has(w)).length;
    return { index, relevance_score: Math.round((hits / (words.size || 1)) * 1000) / 1000, text };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score);
  const top = typeof body.parameters?.top_n === 'number' ? scored.slice(0, body.parameters.top_n) : scored;
  const returnDocuments = body.parameters?.return_documents === true;
  return json(res, 200, {
    output: {
      results: top.map((r) => ({
        index: r.index,
        relevance_score: r.relevance_score,
        ...(returnDocuments ? { document: { text: r.text } } : {}),
      })),
    },
    usage: { total_tokens: tokens(query) + documents.reduce((s: number, d: string) => s + tokens(d), 0) },
    request_id: requestId(),
  });
}

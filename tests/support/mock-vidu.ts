import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * Vidu's enterprise API as a Vidu channel speaks it: every `/ent/v2` call needs
 * `Authorization: Token <key>` (401 `{reason, message}` otherwise). The four creation endpoints check
 * the model, the prompt (required by text2video, at most 1500 characters), the number of images each takes, the duration, resolution
 * and movement amplitude, and answer `{task_id, state: "created", …, credits}`;
 * `GET /ent/v2/tasks/{id}/creations` advances the task one state per query: queueing → processing →
 * success with a creation whose URL this mock serves (without auth, as Vidu's signed CDN links are),
 * or failed with an `err_code` when created while `failNext` is set.
 */
export interface RecordedViduRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

interface ViduTask {
  id: string;
  state: 'created' | 'queueing' | 'processing' | 'success' | 'failed';
  fails: boolean;
  credits: number;
}

export interface MockVidu {
  url: string;
  key: string;
  requests: RecordedViduRequest[];
  tasks: Map<string, ViduTask>;
  /** The bytes every finished creation is. */
  content: Buffer;
  behaviour: { failNext: boolean };
  close(): Promise<void>;
}

const MODELS = ['viduq2', 'viduq1', 'vidu2.0', 'vidu1.5'];
const RESOLUTIONS = ['360p', '540p', '720p', '1080p'];
const AMPLITUDES = ['auto', 'small', 'medium', 'large'];
/** How many images each creation endpoint takes. */
const IMAGES: Record<string, [number, number]> = {
  text2video: [0, 0],
  img2video: [1, 1],
  'start-end2video': [2, 2],
  reference2video: [1, 7],
};

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const refuse = (res: ServerResponse, status: number, reason: string, message: string) =>
  json(res, status, { code: status, reason, message, metadata: {} });

export async function startMockVidu(key = 'vidu-key'): Promise<MockVidu> {
  const mock: MockVidu = {
    url: '',
    key,
    requests: [],
    tasks: new Map(),
    content: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(48)]),
    behaviour: { failNext: false },
    close: async () => {},
  };
  const creations = (task: ViduTask) =>
    task.state === 'success'
      ? [{ id: `c${task.id}`, url: `${mock.url}/cdn/${task.id}.mp4`, cover_url: `${mock.url}/cdn/${task.id}.jpg` }]
      : [];

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    let body: any;
    try {
      body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      return refuse(res, 400, 'BadRequest', 'the body is not JSON');
    }
    mock.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    const file = /^\/cdn\/(\d+)\.mp4$/.exec(path);
    if (req.method === 'GET' && file) {
      if (mock.tasks.get(file[1]!)?.state !== 'success') return refuse(res, 404, 'NotFound', 'no such file');
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(mock.content);
    }
    if (req.headers.authorization !== `Token ${key}`) {
      return refuse(res, 401, 'UnAuthorized', 'invalid api key');
    }
    const create = /^\/ent\/v2\/(text2video|img2video|start-end2video|reference2video)$/.exec(path);
    if (req.method === 'POST' && create) {
      const endpoint = create[1]!;
      if (typeof body !== 'object' || body === null) return refuse(res, 400, 'BadRequest', 'a JSON body is required');
      if (!MODELS.includes(body.model))
        return refuse(res, 400, 'ModelUnavailable', `model ${body.model} is not available`);
      if (endpoint === 'text2video' && (typeof body.prompt !== 'string' || body.prompt === '')) {
        return refuse(res, 400, 'PromptEmpty', 'prompt is required');
      }
      if (typeof body.prompt === 'string' && body.prompt.length > 1500) {
        return refuse(res, 400, 'PromptTooLong', 'prompt must be at most 1500 characters');
      }
      const images = body.images ?? [];
      const [least, most] = IMAGES[endpoint]!;
      if (!Array.isArray(images) || images.length < least || images.length > most) {
        return refuse(res, 400, 'ImageCountInvalid', `${endpoint} takes ${least} to ${most} images`);
      }
      if (body.duration !== undefined && !Number.isInteger(body.duration)) {
        return refuse(res, 400, 'BadRequest', 'duration must be an integer');
      }
      if (body.resolution !== undefined && !RESOLUTIONS.includes(body.resolution)) {
        return refuse(res, 400, 'BadRequest', 'resolution is invalid');
      }
      if (body.movement_amplitude !== undefined && !AMPLITUDES.includes(body.movement_amplitude)) {
        return refuse(res, 400, 'BadRequest', 'movement_amplitude is invalid');
      }
      const task: ViduTask = {
        id: String(800_000_000 + mock.tasks.size),
        state: 'created',
        fails: mock.behaviour.failNext,
        credits: 4 * (body.duration ?? 4),
      };
      mock.behaviour.failNext = false;
      mock.tasks.set(task.id, task);
      return json(res, 200, {
        task_id: task.id,
        state: task.state,
        model: body.model,
        prompt: body.prompt ?? '',
        images,
        duration: body.duration ?? 4,
        seed: body.seed ?? 12345,
        resolution: body.resolution ?? '720p',
        movement_amplitude: body.movement_amplitude ?? 'auto',
        created_at: new Date().toISOString(),
        credits: task.credits,
      });
    }
    const query = /^\/ent\/v2\/tasks\/([^/]+)\/creations$/.exec(path);
    if (req.method === 'GET' && query) {
      const task = mock.tasks.get(decodeURIComponent(query[1]!));
      if (!task) return refuse(res, 404, 'TaskNotFound', 'task not found');
      if (task.state === 'created') task.state = 'queueing';
      else if (task.state === 'queueing') task.state = 'processing';
      else if (task.state === 'processing') task.state = task.fails ? 'failed' : 'success';
      return json(res, 200, {
        id: task.id,
        state: task.state,
        err_code: task.state === 'failed' ? 'AuditSubmitIllegal' : '',
        credits: task.credits,
        payload: '',
        creations: creations(task),
      });
    }
    return refuse(res, 404, 'NotFound', `no such API: ${req.method} ${path}`);
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * Kling's video API as its channels speak it. Every API route checks `Authorization: Bearer <JWT>` the way
 * Kling does: an HS256 token (header `{alg: HS256, typ: JWT}`) whose `iss` is a known AccessKey, signed
 * with that key's SecretKey, with `nbf` passed and `exp` still ahead — otherwise 401 with Kling's
 * `{code: 1000…1004, message, request_id}`. `POST /v1/videos/text2video` needs a prompt and takes Kling's
 * models, modes (std, pro), durations ("5", "10") and aspect ratios; `POST /v1/videos/image2video` needs
 * `image` or `image_tail` (a URL or bare base64, never a data URL). `GET /v1/videos/{endpoint}/{task_id}`
 * finds a task only under the endpoint that made it and advances it one state per query: submitted →
 * processing → succeed with a video URL this mock serves (`/files/{id}.mp4`, no auth, like Kling's CDN),
 * or failed with a message when created while `failNext` is set; `refuseNext` answers the next submission
 * with Kling's 429 "resource pack exhausted".
 */
export interface RecordedKlingRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface KlingTask {
  task_id: string;
  endpoint: 'text2video' | 'image2video';
  task_status: 'submitted' | 'processing' | 'succeed' | 'failed';
  task_status_msg: string;
  created_at: number;
  updated_at: number;
  model_name: string;
  duration: string;
  fails: boolean;
}

export interface MockKling {
  url: string;
  accessKey: string;
  secretKey: string;
  /** The channel key: `AccessKey|SecretKey`. */
  key: string;
  requests: RecordedKlingRequest[];
  tasks: Map<string, KlingTask>;
  /** The bytes every finished video is. */
  content: Buffer;
  behaviour: { failNext: boolean; refuseNext: boolean };
  close(): Promise<void>;
}

const MODELS = ['kling-v1', 'kling-v1-6', 'kling-v2-master', 'kling-v2-1-master', 'kling-v2-5-turbo', 'kling-v2-6'];

const answer = (res: ServerResponse, status: number, code: number, message: string, data?: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, message, request_id: randomUUID(), ...(data === undefined ? {} : { data }) }));
};

type Verdict = { ok: true } | { ok: false; code: number; message: string };

/** Kling's JWT check: which of its 401 codes a request's Authorization earns, if any. */
function verifyKlingToken(authorization: string | undefined, secrets: Record<string, string>): Verdict {
  if (!authorization) return { ok: false, code: 1001, message: 'Authorization is empty' };
  const invalid: Verdict = { ok: false, code: 1002, message: 'Authorization is invalid' };
  const match = /^Bearer (\S+)$/.exec(authorization);
  if (!match) return invalid;
  const [header, payload, signature, extra] = match[1]!.split('.');
  if (!header || !payload || !signature || extra !== undefined) return invalid;
  let head: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return invalid;
  }
  if (head.alg !== 'HS256' || head.typ !== 'JWT') return invalid;
  if (typeof claims.exp !== 'number' || typeof claims.nbf !== 'number') return invalid;
  const secret = typeof claims.iss === 'string' ? secrets[claims.iss] : undefined;
  if (secret === undefined) return { ok: false, code: 1000, message: 'Authentication failed' };
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, code: 1000, message: 'Authentication failed' };
  }
  const now = Math.floor(Date.now() / 1000);
  if (claims.nbf > now) return { ok: false, code: 1003, message: 'Authorization is not yet valid' };
  if (claims.exp <= now) return { ok: false, code: 1004, message: 'Authorization has expired' };
  return { ok: true };
}

export async function startMockKling(accessKey = 'kling-ak', secretKey = 'kling-sk'): Promise<MockKling> {
  const mock: MockKling = {
    url: '',
    accessKey,
    secretKey,
    key: `${accessKey}|${secretKey}`,
    requests: [],
    tasks: new Map(),
    content: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(64)]),
    behaviour: { failNext: false, refuseNext: false },
    close: async () => {},
  };
  const view = (task: KlingTask) => ({
    task_id: task.task_id,
    task_status: task.task_status,
    task_status_msg: task.task_status_msg,
    task_info: {},
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...(task.task_status === 'succeed'
      ? {
          final_unit_deduction: task.duration === '10' ? '2' : '1',
          task_result: {
            videos: [
              { id: `v-${task.task_id}`, url: `${mock.url}/files/${task.task_id}.mp4`, duration: task.duration },
            ],
          },
        }
      : {}),
  });
  const advance = (task: KlingTask) => {
    task.updated_at = Date.now();
    if (task.task_status === 'submitted') task.task_status = 'processing';
    else if (task.task_status === 'processing' && task.fails) {
      Object.assign(task, { task_status: 'failed', task_status_msg: 'Failure to pass the risk control system' });
    } else if (task.task_status === 'processing') task.task_status = 'succeed';
  };

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    let body: Record<string, unknown> = {};
    try {
      if (raw.length > 0) body = JSON.parse(raw.toString('utf8'));
    } catch {
      return answer(res, 400, 1200, 'Invalid request parameters');
    }
    mock.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    const file = /^\/files\/([^/]+)\.mp4$/.exec(path);
    if (req.method === 'GET' && file) {
      if (mock.tasks.get(file[1]!)?.task_status !== 'succeed') return answer(res, 404, 1203, 'Resource not found');
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(mock.content);
    }
    const verdict = verifyKlingToken(req.headers.authorization, { [accessKey]: secretKey });
    if (!verdict.ok) return answer(res, 401, verdict.code, verdict.message);

    const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(path);
    if (req.method === 'POST' && submit) {
      const endpoint = submit[1] as KlingTask['endpoint'];
      const model = String(body.model_name ?? 'kling-v1');
      if (!MODELS.includes(model)) return answer(res, 404, 1203, `model_name ${model} not found`);
      const prompt = body.prompt;
      if (prompt !== undefined && (typeof prompt !== 'string' || prompt.length > 2500)) {
        return answer(res, 400, 1201, 'prompt is invalid');
      }
      if (endpoint === 'text2video' && (typeof prompt !== 'string' || prompt === '')) {
        return answer(res, 400, 1201, 'prompt is required');
      }
      if (endpoint === 'image2video') {
        const images = [body.image, body.image_tail].filter((image) => image !== undefined);
        if (images.length === 0) return answer(res, 400, 1201, 'image or image_tail is required');
        if (images.some((image) => typeof image !== 'string' || image.startsWith('data:'))) {
          return answer(res, 400, 1201, 'image must be a URL or base64 without a data: prefix');
        }
      }
      if (!['std', 'pro'].includes(String(body.mode ?? 'std'))) return answer(res, 400, 1201, 'mode is invalid');
      const duration = body.duration ?? '5';
      if (duration !== '5' && duration !== '10') return answer(res, 400, 1201, 'duration must be "5" or "10"');
      if (body.aspect_ratio !== undefined && !['16:9', '9:16', '1:1'].includes(String(body.aspect_ratio))) {
        return answer(res, 400, 1201, 'aspect_ratio is invalid');
      }
      if (mock.behaviour.refuseNext) {
        mock.behaviour.refuseNext = false;
        return answer(res, 429, 1102, 'Account balance not enough: resource pack exhausted');
      }
      const now = Date.now();
      const task: KlingTask = {
        task_id: randomBytes(9).toString('hex'),
        endpoint,
        task_status: 'submitted',
        task_status_msg: '',
        created_at: now,
        updated_at: now,
        model_name: model,
        duration,
        fails: mock.behaviour.failNext,
      };
      mock.behaviour.failNext = false;
      mock.tasks.set(task.task_id, task);
      return answer(res, 200, 0, 'SUCCEED', view(task));
    }
    const query = /^\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(path);
    const task = query ? mock.tasks.get(query[2]!) : undefined;
    if (req.method === 'GET' && query && task && task.endpoint === query[1]) {
      advance(task);
      return answer(res, 200, 0, 'SUCCEED', view(task));
    }
    return answer(res, 404, 1203, 'Resource not found');
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

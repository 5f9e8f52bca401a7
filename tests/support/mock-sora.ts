import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * OpenAI's Videos API as Sora channels speak it: every route checks `Authorization: Bearer <key>`
 * (401 in OpenAI's error shape otherwise). `POST /v1/videos` (JSON or multipart) needs a prompt and
 * takes seconds 4/8/12 and OpenAI's four sizes; `GET /v1/videos/{id}` advances the video one state
 * per retrieval: queued → in_progress (50) → completed (100), or failed with an error when created
 * while `failNext` is set; `GET /v1/videos/{id}/content` answers the MP4 bytes of a completed video
 * (404 before); `POST /v1/videos/{id}/remix` makes a new video from a completed one.
 */
export interface RecordedSoraRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** JSON fields, or the multipart form's text fields. */
  fields: Record<string, unknown>;
}

export interface SoraVideo {
  id: string;
  object: 'video';
  model: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  created_at: number;
  completed_at: number | null;
  seconds: string;
  size: string;
  remixed_from_video_id: string | null;
  error: { code: string; message: string } | null;
  fails: boolean;
}

export interface MockSora {
  url: string;
  key: string;
  requests: RecordedSoraRequest[];
  videos: Map<string, SoraVideo>;
  /** The bytes every completed video's content is. */
  content: Buffer;
  behaviour: { failNext: boolean };
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const error = (res: ServerResponse, status: number, message: string, code: string | null = null) =>
  json(res, status, { error: { message, type: 'invalid_request_error', param: null, code } });

async function readFields(headers: IncomingHttpHeaders, raw: Buffer): Promise<Record<string, unknown> | undefined> {
  const type = String(headers['content-type'] ?? '');
  try {
    if (type.startsWith('multipart/form-data')) {
      const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
      const fields: Record<string, unknown> = {};
      for (const [name, value] of form) fields[name] = typeof value === 'string' ? value : `<file ${value.name}>`;
      return fields;
    }
    return raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
  } catch {
    return undefined;
  }
}

export async function startMockSora(key = 'sora-key'): Promise<MockSora> {
  const mock: MockSora = {
    url: '',
    key,
    requests: [],
    videos: new Map(),
    content: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(64)]),
    behaviour: { failNext: false },
    close: async () => {},
  };
  const view = ({ fails: _f, ...video }: SoraVideo) => video;
  const create = (model: string, seconds: string, size: string, remixedFrom: string | null) => {
    const video: SoraVideo = {
      id: `video_${randomBytes(12).toString('hex')}`,
      object: 'video',
      model,
      status: 'queued',
      progress: 0,
      created_at: Math.floor(Date.now() / 1000),
      completed_at: null,
      seconds,
      size,
      remixed_from_video_id: remixedFrom,
      error: null,
      fails: mock.behaviour.failNext,
    };
    mock.behaviour.failNext = false;
    mock.videos.set(video.id, video);
    return video;
  };
  const advance = (video: SoraVideo) => {
    if (video.status === 'queued') Object.assign(video, { status: 'in_progress', progress: 50 });
    else if (video.status === 'in_progress' && video.fails) {
      Object.assign(video, { status: 'failed', error: { code: 'moderation_blocked', message: 'prompt was blocked' } });
    } else if (video.status === 'in_progress') {
      Object.assign(video, { status: 'completed', progress: 100, completed_at: Math.floor(Date.now() / 1000) });
    }
  };

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    const fields = await readFields(req.headers, raw);
    mock.requests.push({ method: req.method ?? '', path, headers: req.headers, fields: fields ?? {} });
    if (req.headers.authorization !== `Bearer ${key}`) {
      return error(res, 401, 'Incorrect API key provided', 'invalid_api_key');
    }
    if (fields === undefined) return error(res, 400, 'could not parse the body');
    if (req.method === 'POST' && path === '/v1/videos') {
      const model = typeof fields.model === 'string' ? fields.model : 'sora-2';
      if (!['sora-2', 'sora-2-pro'].includes(model)) return error(res, 400, `unknown model ${model}`, 'invalid_value');
      if (typeof fields.prompt !== 'string' || fields.prompt === '') return error(res, 400, 'prompt is required');
      const seconds = String(fields.seconds ?? '4');
      const size = String(fields.size ?? '720x1280');
      if (!['4', '8', '12'].includes(seconds)) return error(res, 400, 'invalid seconds', 'invalid_value');
      if (!['720x1280', '1280x720', '1024x1792', '1792x1024'].includes(size)) {
        return error(res, 400, 'invalid size', 'invalid_value');
      }
      return json(res, 200, view(create(model, seconds, size, null)));
    }
    const match = /^\/v1\/videos\/([^/]+)(\/content|\/remix)?$/.exec(path);
    const video = match ? mock.videos.get(match[1]!) : undefined;
    if (!match || !video) return error(res, 404, 'video not found', 'not_found');
    if (req.method === 'GET' && match[2] === undefined) {
      advance(video);
      return json(res, 200, view(video));
    }
    if (req.method === 'GET' && match[2] === '/content') {
      if (video.status !== 'completed') return error(res, 404, 'video is not ready', 'not_found');
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(mock.content);
    }
    if (req.method === 'POST' && match[2] === '/remix') {
      if (typeof fields.prompt !== 'string' || fields.prompt === '') return error(res, 400, 'prompt is required');
      if (video.status !== 'completed') return error(res, 400, 'video is not completed');
      return json(res, 200, view(create(video.model, video.seconds, video.size, video.id)));
    }
    return error(res, 404, 'not found');
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

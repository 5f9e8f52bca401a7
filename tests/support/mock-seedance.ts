import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * Volcengine Ark's content generation tasks as Seedance channels speak them: every route checks
 * `Authorization: Bearer <Ark API key>` (401 `AuthenticationError` in Ark's error shape otherwise).
 * `POST /api/v3/contents/generations/tasks` needs a known model and one text item, reads the text
 * commands (`--duration`, `--resolution`, `--ratio`, …) as Ark does and refuses bad values, and answers
 * `{id}`; `GET …/tasks/{id}` advances the task one state per query: queued → running → succeeded with a
 * `content.video_url` this mock serves and `usage.total_tokens` (width × height × frames / 1024, Ark's
 * token formula), or failed with an error when created while `failNext` is set.
 */
export interface SeedanceTask {
  id: string;
  model: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  text: string;
  commands: Record<string, string>;
  media: Array<Record<string, unknown>>;
  fails: boolean;
}

export interface MockSeedance {
  url: string;
  key: string;
  tasks: Map<string, SeedanceTask>;
  requests: Array<{ method: string; path: string; authorization: string | undefined; body: any }>;
  /** The bytes every finished video is. */
  content: Buffer;
  behaviour: { failNext: boolean };
  close(): Promise<void>;
}

const MODELS = [
  'doubao-seedance-1-0-pro-250528',
  'doubao-seedance-1-0-lite-t2v',
  'doubao-seedance-1-0-lite-i2v',
  'doubao-seedance-1-5-pro-251215',
  'doubao-seedance-2-0-260128',
  'doubao-seedance-2-0-fast-260128',
];
/** Width × height of each resolution at 16:9, for the token count. */
const PIXELS: Record<string, [number, number]> = { '480p': [864, 480], '720p': [1280, 720], '1080p': [1920, 1080] };
const FPS = 24;

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const arkError = (res: ServerResponse, status: number, code: string, message: string, type: string) =>
  json(res, status, { error: { code, message, param: '', type } });

/** The text commands at the end of a prompt (`--duration 5 --rs 720p`), by their long names. */
function readCommands(text: string): Record<string, string> | string {
  const aliases: Record<string, string> = {
    rs: 'resolution',
    rt: 'ratio',
    dur: 'duration',
    cf: 'camerafixed',
    wm: 'watermark',
  };
  const commands: Record<string, string> = {};
  for (const match of text.matchAll(/--(\w+)\s+(\S+)/g)) {
    const name = aliases[match[1]!] ?? match[1]!;
    commands[name] = match[2]!;
  }
  const checks: Record<string, (value: string) => boolean> = {
    resolution: (v) => v in PIXELS,
    ratio: (v) => ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'].includes(v),
    duration: (v) => /^\d+$/.test(v) && Number(v) >= 2 && Number(v) <= 15,
    seed: (v) => /^-?\d+$/.test(v),
    camerafixed: (v) => v === 'true' || v === 'false',
    watermark: (v) => v === 'true' || v === 'false',
  };
  for (const [name, value] of Object.entries(commands)) {
    const check = checks[name];
    if (!check) return `unknown parameter --${name}`;
    if (!check(value)) return `invalid value ${value} for --${name}`;
  }
  return commands;
}

export async function startMockSeedance(key = 'ark-key'): Promise<MockSeedance> {
  const mock: MockSeedance = {
    url: '',
    key,
    tasks: new Map(),
    requests: [],
    content: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), randomBytes(48)]),
    behaviour: { failNext: false },
    close: async () => {},
  };
  const tokensOf = (task: SeedanceTask) => {
    const [width, height] = PIXELS[task.commands.resolution ?? '720p']!;
    return Math.floor((width * height * (FPS * Number(task.commands.duration ?? 5))) / 1024);
  };
  const view = (task: SeedanceTask) => ({
    id: task.id,
    model: task.model,
    status: task.status,
    ...(task.status === 'succeeded'
      ? {
          content: { video_url: `${mock.url}/videos/${task.id}.mp4` },
          usage: { completion_tokens: tokensOf(task), total_tokens: tokensOf(task) },
        }
      : {}),
    ...(task.status === 'failed'
      ? {
          error: {
            code: 'OutputVideoSensitiveContentDetected',
            message: 'The output video may contain sensitive content',
          },
        }
      : {}),
    resolution: task.commands.resolution ?? '720p',
    duration: Number(task.commands.duration ?? 5),
    created_at: Math.floor(Date.now() / 1000),
    updated_at: Math.floor(Date.now() / 1000),
  });

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    let body: any = {};
    try {
      body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {};
    } catch {
      return arkError(res, 400, 'InvalidParameter', 'the request body is not valid JSON', 'BadRequest');
    }
    mock.requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
    const video = /^\/videos\/([^/]+)\.mp4$/.exec(path);
    if (req.method === 'GET' && video) {
      // The finished video's own address: a signed object URL, no Ark key needed.
      if (mock.tasks.get(video[1]!)?.status !== 'succeeded')
        return arkError(res, 404, 'NotFound', 'no such video', 'NotFound');
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(mock.content);
    }
    if (req.headers.authorization !== `Bearer ${key}`) {
      return arkError(
        res,
        401,
        'AuthenticationError',
        'The API key or AK/SK in the request is missing or invalid.',
        'Unauthorized',
      );
    }
    if (req.method === 'POST' && path === '/api/v3/contents/generations/tasks') {
      if (!MODELS.includes(body.model)) {
        return arkError(
          res,
          404,
          'InvalidEndpointOrModel.NotFound',
          `The model ${body.model} does not exist.`,
          'NotFound',
        );
      }
      const content: any[] = Array.isArray(body.content) ? body.content : [];
      const texts = content.filter((item) => item?.type === 'text');
      if (texts.length !== 1 || typeof texts[0].text !== 'string') {
        return arkError(res, 400, 'MissingParameter', 'content must have one text item', 'BadRequest');
      }
      const commands = readCommands(texts[0].text);
      if (typeof commands === 'string') return arkError(res, 400, 'InvalidParameter', commands, 'BadRequest');
      const task: SeedanceTask = {
        id: `cgt-${Date.now()}-${randomBytes(3).toString('hex')}`,
        model: body.model,
        status: 'queued',
        text: texts[0].text,
        commands,
        media: content.filter((item) => item?.type !== 'text'),
        fails: mock.behaviour.failNext,
      };
      mock.behaviour.failNext = false;
      mock.tasks.set(task.id, task);
      return json(res, 200, { id: task.id });
    }
    const match = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
    const task = match ? mock.tasks.get(match[1]!) : undefined;
    if (req.method === 'GET' && task) {
      if (task.status === 'queued') task.status = 'running';
      else if (task.status === 'running') task.status = task.fails ? 'failed' : 'succeeded';
      return json(res, 200, view(task));
    }
    return arkError(res, 404, 'ResourceNotFound', 'The specified task is not found.', 'NotFound');
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

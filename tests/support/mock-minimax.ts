import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local MiniMax endpoint: `POST /v1/text/chatcompletion_v2` (OpenAI-shaped; streamed as SSE whose
 * last chunk repeats the whole message beside the finish reason and usage) and `POST /v1/t2a_v2`
 * (speech as hex in `data.audio`), and Hailuo video: `POST /v1/video_generation` (model, prompt,
 * duration 6 or 10, resolution) answers a task id, `GET /v1/query/video_generation?task_id=` advances
 * it one state per query (Queueing → Processing → Success with a file id, or Fail when created while
 * `behaviour.failNextVideo` is set), and `GET /v1/files/retrieve?file_id=` gives the file's
 * download URL, served by this mock without auth as MiniMax's signed links are. Like MiniMax it
 * answers every refusal with HTTP 200 and a `base_resp` whose status_code is not 0: 1004 for a
 * missing or wrong Bearer key, 2013 for bad input.
 */
export interface MockMinimaxBehaviour {
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  toolArgs?: Record<string, unknown>;
  /** The next video task fails (status Fail) instead of finishing. */
  failNextVideo?: boolean;
}

interface HailuoTask {
  id: string;
  status: 'Preparing' | 'Queueing' | 'Processing' | 'Success' | 'Fail';
  fails: boolean;
  fileId: string;
}

export interface MockMinimax {
  url: string;
  behaviour: MockMinimaxBehaviour;
  requests: Array<{ path: string; body: any }>;
  videoTasks: Map<string, HailuoTask>;
  /** The bytes every finished video file is. */
  videoContent: Buffer;
  close(): Promise<void>;
}

/** The bytes the speech endpoint encodes (an MP3 frame header, then text). */
export const MOCK_SPEECH_AUDIO = Buffer.concat([Buffer.from([0xff, 0xf3, 0x44, 0xc4]), Buffer.from('minimax-speech')]);

const VOICES = new Set(['male-qn-qingse', 'female-shaonv', 'English_Graceful_Lady']);
const VIDEO_MODELS = new Set([
  'MiniMax-Hailuo-02',
  'MiniMax-Hailuo-2.3',
  'T2V-01',
  'T2V-01-Director',
  'I2V-01',
  'S2V-01',
]);
const VIDEO_RESOLUTIONS = new Set(['512P', '720P', '768P', '1080P']);

export async function startMockMinimax(apiKey: string): Promise<MockMinimax> {
  const state = { behaviour: {} as MockMinimaxBehaviour };
  const requests: MockMinimax['requests'] = [];
  const videoTasks = new Map<string, HailuoTask>();
  const videoContent = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(40)]);
  let baseUrl = '';
  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const path = url.pathname;
    const fail = (code: number, message: string) =>
      json(res, { base_resp: { status_code: code, status_msg: message } });
    const download = /^\/download\/(\d+)\.mp4$/.exec(path);
    if (req.method === 'GET' && download) {
      const done = [...videoTasks.values()].some((t) => t.fileId === download[1] && t.status === 'Success');
      res.writeHead(done ? 200 : 404, { 'content-type': done ? 'video/mp4' : 'text/plain' });
      return void res.end(done ? videoContent : 'not found');
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return fail(
        1004,
        "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
      );
    }
    if (req.method === 'GET') {
      requests.push({ path: `${path}${url.search}`, body: undefined });
      return json(res, answerVideoQuery(url));
    }
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail(2013, 'invalid params, request body is not JSON');
    }
    requests.push({ path, body });
    if (path === '/v1/video_generation') {
      if (!VIDEO_MODELS.has(body.model)) return fail(2013, `invalid params, model ${body.model} is not supported`);
      if (typeof body.prompt !== 'string' && typeof body.first_frame_image !== 'string') {
        return fail(2013, 'invalid params, prompt or first_frame_image is required');
      }
      if (String(body.model).startsWith('I2V') && typeof body.first_frame_image !== 'string') {
        return fail(2013, 'invalid params, first_frame_image is required');
      }
      if (body.duration !== undefined && body.duration !== 6 && body.duration !== 10) {
        return fail(2013, 'invalid params, duration must be 6 or 10');
      }
      if (body.resolution !== undefined && !VIDEO_RESOLUTIONS.has(body.resolution)) {
        return fail(2013, 'invalid params, resolution is not supported');
      }
      const id = String(106_000_000_000 + videoTasks.size);
      videoTasks.set(id, {
        id,
        status: 'Preparing',
        fails: state.behaviour.failNextVideo === true,
        fileId: String(205_000_000_000 + videoTasks.size),
      });
      state.behaviour.failNextVideo = false;
      return json(res, { task_id: id, base_resp: { status_code: 0, status_msg: 'success' } });
    }
    if (path === '/v1/t2a_v2') {
      if (typeof body.text !== 'string' || body.text === '') return fail(2013, 'invalid params, text is required');
      if (!VOICES.has(body.voice_setting?.voice_id)) return fail(2054, 'voice id not exist');
      const format = body.audio_setting?.format ?? 'mp3';
      return json(res, {
        data: { audio: MOCK_SPEECH_AUDIO.toString('hex'), status: 2, ced: '' },
        extra_info: {
          audio_length: 1200,
          audio_sample_rate: 32000,
          audio_size: MOCK_SPEECH_AUDIO.length,
          bitrate: 128000,
          word_count: body.text.length,
          invisible_character_ratio: 0,
          usage_characters: body.text.length,
          audio_format: format,
          audio_channel: 1,
        },
        trace_id: randomUUID(),
        base_resp: { status_code: 0, status_msg: 'success' },
      });
    }
    if (path !== '/v1/text/chatcompletion_v2') return fail(2013, `unknown path ${path}`);
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
      return fail(2013, 'invalid params, model and messages are required');
    }
    const reply = state.behaviour.reply ?? 'Hello from the MiniMax mock.';
    const usage = state.behaviour.usage ?? { prompt_tokens: 11, completion_tokens: 5 };
    const totals = { total_tokens: usage.prompt_tokens + usage.completion_tokens, total_characters: 0, ...usage };
    const id = randomUUID().replaceAll('-', '');
    const created = Math.floor(Date.now() / 1000);
    const tool = Array.isArray(body.tools) ? body.tools[0] : undefined;
    const toolCalls = tool && [
      {
        id: `call_function_${id.slice(0, 10)}`,
        type: 'function',
        function: {
          name: tool.function.name,
          arguments: JSON.stringify(state.behaviour.toolArgs ?? { city: 'Paris' }),
        },
      },
    ];
    const message = toolCalls
      ? { role: 'assistant', content: '', tool_calls: toolCalls, name: 'MiniMax AI', audio_content: '' }
      : { role: 'assistant', content: reply, name: 'MiniMax AI', audio_content: '' };
    const finish = toolCalls ? 'tool_calls' : 'stop';
    const common = { id, created, model: body.model, input_sensitive: false, output_sensitive: false };
    if (body.stream !== true) {
      return json(res, {
        ...common,
        object: 'chat.completion',
        choices: [{ finish_reason: finish, index: 0, message }],
        usage: totals,
        base_resp: { status_code: 0, status_msg: '' },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const deltas = toolCalls
      ? [{ role: 'assistant', content: '', tool_calls: toolCalls }]
      : [reply.slice(0, 6), reply.slice(6)].map((content) => ({ role: 'assistant', content }));
    for (const delta of deltas) {
      res.write(
        `data: ${JSON.stringify({ ...common, object: 'chat.completion.chunk', choices: [{ index: 0, delta }], usage: null })}\n\n`,
      );
    }
    res.end(
      `data: ${JSON.stringify({
        ...common,
        object: 'chat.completion',
        choices: [{ finish_reason: finish, index: 0, message }],
        usage: totals,
        base_resp: { status_code: 0, status_msg: '' },
      })}\n\n`,
    );
  });
  /** The video query and file APIs (GETs). */
  function answerVideoQuery(url: URL) {
    if (url.pathname === '/v1/query/video_generation') {
      const task = videoTasks.get(url.searchParams.get('task_id') ?? '');
      if (!task) return { base_resp: { status_code: 2013, status_msg: 'invalid params, task not found' } };
      const next = {
        Preparing: 'Queueing',
        Queueing: 'Processing',
        Processing: task.fails ? 'Fail' : 'Success',
      } as const;
      if (task.status in next) task.status = next[task.status as keyof typeof next];
      return {
        task_id: task.id,
        status: task.status,
        ...(task.status === 'Success' ? { file_id: task.fileId, video_width: 1366, video_height: 768 } : {}),
        base_resp:
          task.status === 'Fail'
            ? { status_code: 1026, status_msg: 'video generation failed: sensitive content' }
            : { status_code: 0, status_msg: 'success' },
      };
    }
    if (url.pathname === '/v1/files/retrieve') {
      const task = [...videoTasks.values()].find((t) => t.fileId === url.searchParams.get('file_id'));
      if (task?.status !== 'Success') {
        return { base_resp: { status_code: 1026, status_msg: 'file not found' } };
      }
      return {
        file: {
          file_id: Number(task.fileId),
          bytes: videoContent.length,
          created_at: Math.floor(Date.now() / 1000),
          filename: 'output.mp4',
          purpose: 'video_generation',
          download_url: `${baseUrl}/download/${task.fileId}.mp4`,
        },
        base_resp: { status_code: 0, status_msg: 'success' },
      };
    }
    return { base_resp: { status_code: 2013, status_msg: `unknown path ${url.pathname}` } };
  }
  baseUrl = server.url;
  return {
    url: server.url,
    close: server.close,
    requests,
    videoTasks,
    videoContent,
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(value: MockMinimaxBehaviour) {
      state.behaviour = value;
    },
  };
}

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

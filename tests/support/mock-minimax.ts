import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local MiniMax endpoint: `POST /v1/text/chatcompletion_v2` (OpenAI-shaped; streamed as SSE whose
 * last chunk repeats the whole message beside the finish reason and usage) and `POST /v1/t2a_v2`
 * (speech as hex in `data.audio`). Like MiniMax it answers every refusal with HTTP 200 and a
 * `base_resp` whose status_code is not 0: 1004 for a missing or wrong Bearer key, 2013 for bad input.
 */
export interface MockMinimaxBehaviour {
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  toolArgs?: Record<string, unknown>;
}

export interface MockMinimax {
  url: string;
  behaviour: MockMinimaxBehaviour;
  requests: Array<{ path: string; body: any }>;
  close(): Promise<void>;
}

/** The bytes the speech endpoint encodes (an MP3 frame header, then text). */
export const MOCK_SPEECH_AUDIO = Buffer.concat([Buffer.from([0xff, 0xf3, 0x44, 0xc4]), Buffer.from('minimax-speech')]);

const VOICES = new Set(['male-qn-qingse', 'female-shaonv', 'English_Graceful_Lady']);

export async function startMockMinimax(apiKey: string): Promise<MockMinimax> {
  const state = { behaviour: {} as MockMinimaxBehaviour };
  const requests: MockMinimax['requests'] = [];
  const server = await serveMock(async (req, res, raw) => {
    const path = new URL(req.url ?? '/', 'http://mock').pathname;
    const fail = (code: number, message: string) =>
      json(res, { base_resp: { status_code: code, status_msg: message } });
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return fail(
        1004,
        "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
      );
    }
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail(2013, 'invalid params, request body is not JSON');
    }
    requests.push({ path, body });
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
  return {
    url: server.url,
    close: server.close,
    requests,
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

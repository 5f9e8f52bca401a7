import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Ollama: `POST /api/chat` (NDJSON stream unless `stream: false`; the last line `done: true`
 * with `prompt_eval_count` and `eval_count`; tool calls with object arguments), `POST /api/embed`,
 * `GET /api/tags`, `POST /api/pull` (progress lines), `DELETE /api/delete`, `GET /api/version`, and its
 * OpenAI-compatible `POST /v1/completions` (OpenAI's error shape there).
 * Models must be pulled: others answer 404 `{"error": "model \"x\" not found, try pulling it first"}`.
 */
export interface RecordedOllamaRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface OllamaBehaviour {
  reply?: string;
  usage?: { prompt_eval_count: number; eval_count: number };
}

export interface MockOllama {
  url: string;
  requests: RecordedOllamaRequest[];
  behaviour: OllamaBehaviour;
  /** The pulled models. */
  models: Set<string>;
  close(): Promise<void>;
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockOllama(models: string[]): Promise<MockOllama> {
  const requests: RecordedOllamaRequest[] = [];
  const pulled = new Set(models);
  let behaviour: OllamaBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      return json(res, 400, { error: 'invalid character in request body' });
    }
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    const route = `${req.method} ${path}`;
    if (route === 'GET /api/version') return json(res, 200, { version: '0.6.2' });
    if (route === 'GET /api/tags') {
      return json(res, 200, {
        models: [...pulled].map((name) => ({
          name,
          model: name,
          modified_at: '2025-01-01T00:00:00Z',
          size: 4_661_224_676,
          digest: 'sha256:0f',
          details: { format: 'gguf', family: 'llama', parameter_size: '8.0B', quantization_level: 'Q4_K_M' },
        })),
      });
    }
    if (route === 'POST /api/pull') return pull(res, pulled, body);
    if (route === 'DELETE /api/delete') {
      // Ollama takes `model`, and still the older `name` its JavaScript client sends.
      const model = body?.model ?? body?.name;
      if (!pulled.delete(model)) return json(res, 404, { error: `model '${model}' not found` });
      res.writeHead(200).end();
      return;
    }
    if (route === 'POST /v1/completions') return completions(res, pulled, body);
    if (route !== 'POST /api/chat' && route !== 'POST /api/embed')
      return json(res, 404, { error: '404 page not found' });
    if (!pulled.has(body?.model)) {
      return json(res, 404, { error: `model "${body?.model}" not found, try pulling it first` });
    }
    return path === '/api/chat' ? chat(behaviour, res, body) : embed(res, body);
  });
  return {
    ...server,
    requests,
    models: pulled,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: OllamaBehaviour) {
      behaviour = value;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function chat(b: OllamaBehaviour, res: ServerResponse, body: any) {
  if (!Array.isArray(body.messages)) return json(res, 400, { error: 'messages must be an array' });
  const stamp = () => new Date().toISOString();
  const lastRole = body.messages.at(-1)?.role;
  const call = Array.isArray(body.tools) && body.tools.length && lastRole !== 'tool' ? body.tools[0] : undefined;
  if (call && typeof call.function?.name !== 'string') return json(res, 400, { error: 'invalid tool' });
  const reply = call ? '' : (b.reply ?? 'Hello from Llama.');
  const toolCalls = call ? [{ function: { name: call.function.name, arguments: { city: 'Paris' } } }] : undefined;
  const totals = {
    done_reason: 'stop',
    total_duration: 5_043_500_667,
    load_duration: 5_025_959,
    prompt_eval_count: b.usage?.prompt_eval_count ?? tokens(JSON.stringify(body.messages)),
    prompt_eval_duration: 325_953_000,
    eval_count: b.usage?.eval_count ?? tokens(reply || JSON.stringify(toolCalls)),
    eval_duration: 4_709_213_000,
  };
  // Ollama streams unless the request says `"stream": false`.
  if (body.stream === false) {
    return json(res, 200, {
      model: body.model,
      created_at: stamp(),
      message: { role: 'assistant', content: reply, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
      done: true,
      ...totals,
    });
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const lines: unknown[] = (reply.match(/.{1,5}/gs) ?? []).map((piece) => ({
    model: body.model,
    created_at: stamp(),
    message: { role: 'assistant', content: piece },
    done: false,
  }));
  if (toolCalls) {
    lines.push({
      model: body.model,
      created_at: stamp(),
      message: { role: 'assistant', content: '', tool_calls: toolCalls },
      done: false,
    });
  }
  lines.push({
    model: body.model,
    created_at: stamp(),
    message: { role: 'assistant', content: '' },
    done: true,
    ...totals,
  });
  res.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
}

function embed(res: ServerResponse, body: any) {
  const input: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
  if (input.some((text) => typeof text !== 'string')) return json(res, 400, { error: 'invalid input type' });
  return json(res, 200, {
    model: body.model,
    embeddings: input.map((text) => [(text as string).length / 100, 0.25, -0.5]),
    total_duration: 14_143_917,
    load_duration: 1_019_500,
    prompt_eval_count: input.reduce((sum: number, text) => sum + tokens(text as string), 0),
  });
}

function pull(res: ServerResponse, pulled: Set<string>, body: any) {
  const model = body?.model ?? body?.name;
  if (typeof model !== 'string' || model === '') return json(res, 400, { error: 'model is required' });
  pulled.add(model);
  const steps = [
    { status: 'pulling manifest' },
    { status: `pulling ${model}`, digest: 'sha256:0f', total: 2_142_590_208, completed: 2_142_590_208 },
    { status: 'verifying sha256 digest' },
    { status: 'writing manifest' },
    { status: 'success' },
  ];
  if (body.stream === false) return json(res, 200, { status: 'success' });
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  res.end(steps.map((step) => `${JSON.stringify(step)}\n`).join(''));
}

/** Ollama's OpenAI-compatible legacy completions (whole answers; OpenAI's error shape). */
function completions(res: ServerResponse, pulled: Set<string>, body: any) {
  if (!pulled.has(body?.model)) {
    return json(res, 404, {
      error: {
        message: `model "${body?.model}" not found, try pulling it first`,
        type: 'api_error',
        param: null,
        code: null,
      },
    });
  }
  const text = 'Once upon a time.';
  const prompt = tokens(String(body.prompt ?? ''));
  return json(res, 200, {
    id: 'cmpl-245',
    object: 'text_completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: 'fp_ollama',
    choices: [{ text, index: 0, finish_reason: 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: tokens(text), total_tokens: prompt + tokens(text) },
  });
}

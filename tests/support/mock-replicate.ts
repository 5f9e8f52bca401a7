import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Replicate HTTP API: predictions created at `/v1/models/{owner}/{name}/predictions` (or
 * `/v1/predictions` with a version), held until done with `Prefer: wait` or answered `starting` with
 * `urls.get` to poll and `urls.stream` to read as server-sent events (`output`, `done`, `error`).
 * Language models report `metrics.input_token_count`/`output_token_count`; image models answer
 * output URLs. It refuses a bad token (401), an unknown model (404) and bad input (422) with
 * Replicate's problem bodies `{title, detail, status}`.
 */
export interface RecordedReplicateRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MockReplicateBehaviour {
  reply?: string;
  tokens?: { input: number; output: number };
  /** The prediction fails with this error. */
  failWith?: string;
}

export interface MockReplicate {
  url: string;
  requests: RecordedReplicateRequest[];
  behaviour: MockReplicateBehaviour;
  close(): Promise<void>;
}

interface Prediction {
  id: string;
  model: string;
  version: string;
  kind: 'language' | 'image';
  input: Record<string, any>;
  status: string;
  output: unknown;
  error: string | null;
  created_at: string;
  completed_at?: string;
  metrics?: Record<string, number>;
  polls: number;
}

const DEFAULT_REPLY = 'Hello from Replicate.\nSecond line.';
const VERSION = 'a'.repeat(64);

export async function startMockReplicate(options: {
  tokens: string[];
  models: Record<string, 'language' | 'image'>;
}): Promise<MockReplicate> {
  const requests: RecordedReplicateRequest[] = [];
  const predictions = new Map<string, Prediction>();
  const state: MockReplicate = { url: '', requests, behaviour: {}, close: async () => {} };

  const problem = (res: ServerResponse, status: number, title: string, detail: string, more = {}) => {
    res.writeHead(status, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ title, detail, status, ...more }));
  };
  const view = (p: Prediction) => ({
    id: p.id,
    model: p.model,
    version: p.version,
    input: p.input,
    logs: '',
    output: p.output,
    data_removed: false,
    error: p.error,
    status: p.status,
    created_at: p.created_at,
    ...(p.completed_at ? { started_at: p.created_at, completed_at: p.completed_at } : {}),
    urls: {
      cancel: `${state.url}/v1/predictions/${p.id}/cancel`,
      get: `${state.url}/v1/predictions/${p.id}`,
      stream: `${state.url}/v1/files/stream-${p.id}`,
      web: `https://replicate.com/p/${p.id}`,
    },
    ...(p.metrics ? { metrics: p.metrics } : {}),
  });
  const finish = (p: Prediction) => {
    const reply = state.behaviour.reply ?? DEFAULT_REPLY;
    p.completed_at = new Date().toISOString();
    if (state.behaviour.failWith) {
      p.status = 'failed';
      p.error = state.behaviour.failWith;
      return;
    }
    p.status = 'succeeded';
    if (p.kind === 'image') {
      p.output = Array.from(
        { length: p.input.num_outputs ?? 1 },
        (_, i) => `https://replicate.delivery/xezq/${p.id}/out-${i}.webp`,
      );
      p.metrics = { predict_time: 0.9, total_time: 1.1 };
      return;
    }
    p.output = tokensOf(reply);
    const input = state.behaviour.tokens?.input ?? Math.ceil(String(p.input.prompt).length / 4) + 10;
    const output = state.behaviour.tokens?.output ?? (p.output as string[]).length;
    p.metrics = {
      predict_time: 0.5,
      total_time: 0.6,
      input_token_count: input,
      output_token_count: output,
      time_to_first_token: 0.1,
      tokens_per_second: 40,
    };
  };

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const streamed = /^\/v1\/files\/stream-(\w+)$/.exec(path);
    if (streamed && req.method === 'GET') {
      // Stream URLs are capability URLs: Replicate's client reads them without the API token.
      const prediction = predictions.get(streamed[1]!);
      if (!prediction) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      requests.push({ method: 'GET', path, headers: req.headers, body: undefined });
      return streamPrediction(res, prediction, () => finish(prediction));
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !options.tokens.includes(token)) {
      return problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    }
    let body: any;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return problem(res, 400, 'Bad request', 'The request body is not valid JSON');
      }
    }
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });

    const polled = /^\/v1\/predictions\/(\w+)$/.exec(path);
    if (polled && req.method === 'GET') {
      const prediction = predictions.get(polled[1]!);
      if (!prediction) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      if (prediction.status === 'starting') prediction.status = 'processing';
      else if (prediction.status === 'processing' && ++prediction.polls >= 2) finish(prediction);
      return json(res, 200, view(prediction));
    }

    const byModel = /^\/v1\/models\/([\w.-]+)\/([\w.-]+)\/predictions$/.exec(path);
    let model: string | undefined;
    if (byModel && req.method === 'POST') model = `${byModel[1]}/${byModel[2]}`;
    else if (path === '/v1/predictions' && req.method === 'POST') {
      if (body?.version !== VERSION)
        return problem(res, 422, 'Invalid version', 'The specified version does not exist');
      model = Object.keys(options.models)[0];
    } else return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    const kind = model ? options.models[model] : undefined;
    if (!model || !kind) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    const input = body?.input;
    if (!input || typeof input !== 'object' || typeof input.prompt !== 'string') {
      return problem(res, 422, 'Input validation failed', '- input: prompt is required', {
        invalid_fields: [{ type: 'required', field: 'input.prompt', description: 'prompt is required' }],
      });
    }
    if (kind === 'image' && input.num_outputs !== undefined && !(input.num_outputs >= 1 && input.num_outputs <= 4)) {
      return problem(res, 422, 'Input validation failed', '- input.num_outputs: Must be less than or equal to 4');
    }
    const prediction: Prediction = {
      id: randomBytes(13).toString('hex').slice(0, 26),
      model,
      version: VERSION,
      kind,
      input,
      status: 'starting',
      output: null,
      error: null,
      created_at: new Date().toISOString(),
      polls: 0,
    };
    predictions.set(prediction.id, prediction);
    if (/^wait(=\d+)?$/.test(String(req.headers.prefer ?? ''))) finish(prediction);
    return json(res, 201, view(prediction));
  });
  state.url = server.url;
  state.close = server.close;
  return state;
}

/** The reply as a language model streams it: a word (with its leading space) per token. */
const tokensOf = (reply: string) => reply.match(/\s*\S+/g) ?? [];

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** `output` events (multi-line data for tokens with newlines), then `done` (or `error`). */
async function streamPrediction(res: ServerResponse, prediction: Prediction, finish: () => void) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  finish();
  if (prediction.status === 'failed') {
    res.end(`event: error\ndata: ${JSON.stringify({ detail: prediction.error })}\n\n`);
    return;
  }
  const outputs = Array.isArray(prediction.output) ? (prediction.output as string[]) : [];
  for (const [i, token] of outputs.entries()) {
    const data = token
      .split('\n')
      .map((line) => `data: ${line}`)
      .join('\n');
    const text = `event: output\nid: ${i}\n${data}\n\n`;
    res.write(text.slice(0, 7));
    res.write(text.slice(7));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end('event: done\ndata: {}\n\n');
}

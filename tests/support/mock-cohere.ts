import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local upstream speaking Cohere's v2 API as api.cohere.com does: a Bearer key checked on every
 * call, `{id, message}` error bodies, request fields validated (unknown ones refused, as Cohere's
 * strict JSON decoding does), and answers in the real wire shapes — `/v2/chat` whole or as SSE
 * (`event:` + `data:` per event, message-start … message-end with usage), `/v2/embed`, `/v2/rerank`
 * (billed in search units) and `GET /v1/models`.
 */
export interface CohereRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface CohereBehaviour {
  /** Reply text of a chat; default "Hello from Cohere." */
  reply?: string;
  /** Billed units to report (what Cohere charges); the raw token counts are reported larger. */
  billed?: { input_tokens: number; output_tokens: number };
}

export interface MockCohere {
  url: string;
  key: string;
  requests: CohereRequest[];
  behaviour: CohereBehaviour;
  close(): Promise<void>;
}

const CHAT_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'tools',
  'strict_tools',
  'documents',
  'citation_options',
  'response_format',
  'safety_mode',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'k',
  'p',
  'logprobs',
  'tool_choice',
  'thinking',
  'priority',
]);
const EMBED_FIELDS = new Set([
  'model',
  'texts',
  'images',
  'inputs',
  'input_type',
  'embedding_types',
  'output_dimension',
  'max_tokens',
  'truncate',
  'priority',
]);
const RERANK_FIELDS = new Set(['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc', 'priority']);
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Cohere's own system prompt counts in `tokens` but is not billed. */
const SYSTEM_PROMPT_TOKENS = 400;

export async function startMockCohere(key = 'co-test-key'): Promise<MockCohere> {
  const requests: CohereRequest[] = [];
  let behaviour: CohereBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      return fail(res, 400, 'invalid request: could not parse the request body as JSON');
    }
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    const auth = req.headers.authorization;
    if (!auth) return fail(res, 401, 'no api key supplied');
    if (!/^bearer /i.test(auth) || auth.slice(7) !== key) return fail(res, 401, 'invalid api token');
    if (req.method === 'GET' && path === '/v1/models') {
      return json(res, 200, {
        models: ['command-a-03-2025', 'command-r', 'embed-v4.0', 'rerank-v3.5'].map((name) => ({
          name,
          endpoints: name.startsWith('embed') ? ['embed'] : name.startsWith('rerank') ? ['rerank'] : ['chat'],
          finetuned: false,
          context_length: 128000,
        })),
      });
    }
    if (req.method !== 'POST') return fail(res, 404, `no route for ${req.method} ${path}`);
    switch (path) {
      case '/v2/chat':
        return chat(behaviour, res, body);
      case '/v2/embed':
        return embed(res, body);
      case '/v2/rerank':
        return rerank(res, body);
      default:
        return fail(res, 404, `no route for POST ${path}`);
    }
  });
  return {
    ...server,
    key,
    requests,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: CohereBehaviour) {
      behaviour = value;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function fail(res: ServerResponse, status: number, message: string) {
  json(res, status, { id: randomUUID(), message });
}

/** Cohere refuses a field it does not know, naming it. */
function unknownField(body: any, allowed: Set<string>): string | undefined {
  return Object.keys(body ?? {}).find((name) => !allowed.has(name));
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

async function chat(b: CohereBehaviour, res: ServerResponse, body: any) {
  const unknown = unknownField(body, CHAT_FIELDS);
  if (unknown) return fail(res, 400, `invalid request: json: unknown field "${unknown}"`);
  if (typeof body?.model !== 'string') return fail(res, 400, 'invalid request: model must be a string');
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return fail(res, 400, 'invalid request: messages must not be empty');
  for (const m of messages) {
    if (!ROLES.has(m?.role)) return fail(res, 400, `invalid request: unknown role "${m?.role}"`);
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
      return fail(res, 400, 'invalid request: tool messages need a tool_call_id');
    }
    for (const call of m.tool_calls ?? []) {
      if (call?.type !== 'function' || typeof call.function?.name !== 'string') {
        return fail(res, 400, 'invalid request: tool_calls must be functions with a name');
      }
    }
  }
  for (const tool of body.tools ?? []) {
    if (
      tool?.type !== 'function' ||
      typeof tool.function?.name !== 'string' ||
      typeof tool.function.parameters !== 'object'
    ) {
      return fail(res, 400, 'invalid request: each tool needs type "function", a name and parameters');
    }
  }
  if (body.tool_choice !== undefined && !['REQUIRED', 'NONE'].includes(body.tool_choice)) {
    return fail(res, 400, 'invalid request: tool_choice must be one of REQUIRED, NONE');
  }
  // A tool is called while none of its results is in the conversation; then the answer is text.
  const answered = messages.some((m) => m.role === 'tool');
  const tool = !answered && body.tool_choice !== 'NONE' ? body.tools?.[0]?.function?.name : undefined;
  const reply = b.reply ?? 'Hello from Cohere.';
  const billed = b.billed ?? { input_tokens: tokens(JSON.stringify(messages)), output_tokens: tokens(reply) };
  const usage = {
    billed_units: billed,
    tokens: { input_tokens: billed.input_tokens + SYSTEM_PROMPT_TOKENS, output_tokens: billed.output_tokens },
  };
  const id = randomUUID();
  const call = tool
    ? { id: `${tool}_${id.slice(0, 8)}`, type: 'function', function: { name: tool, arguments: '{"city":"Paris"}' } }
    : undefined;
  const plan = 'I will look up the weather.';
  const finish = call ? 'TOOL_CALL' : 'COMPLETE';
  if (!body.stream) {
    const message = call
      ? { role: 'assistant', tool_plan: plan, tool_calls: [call] }
      : { role: 'assistant', content: [{ type: 'text', text: reply }] };
    return json(res, 200, { id, message, finish_reason: finish, usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, fields: object) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`);
  send('message-start', {
    id,
    delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
  });
  if (call) {
    for (const piece of plan.match(/.{1,6}/gs) ?? [])
      send('tool-plan-delta', { delta: { message: { tool_plan: piece } } });
    send('tool-call-start', {
      index: 0,
      delta: { message: { tool_calls: { ...call, function: { name: call.function.name, arguments: '' } } } },
    });
    for (const piece of call.function.arguments.match(/.{1,5}/gs) ?? []) {
      send('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
    }
    send('tool-call-end', { index: 0 });
  } else {
    send('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const piece of reply.match(/.{1,5}/gs) ?? []) {
      send('content-delta', { index: 0, delta: { message: { content: { text: piece } } } });
    }
    send('content-end', { index: 0 });
  }
  send('message-end', { delta: { finish_reason: finish, usage } });
  res.end();
}

function embed(res: ServerResponse, body: any) {
  const unknown = unknownField(body, EMBED_FIELDS);
  if (unknown) return fail(res, 400, `invalid request: json: unknown field "${unknown}"`);
  if (!['search_document', 'search_query', 'classification', 'clustering', 'image'].includes(body?.input_type)) {
    return fail(res, 400, 'invalid request: input_type is required for embed-v3 and newer models');
  }
  const texts: unknown[] = Array.isArray(body.texts) ? body.texts : [];
  if (texts.length === 0 || !texts.every((t) => typeof t === 'string')) {
    return fail(res, 400, 'invalid request: texts must be a non-empty list of strings');
  }
  const types: string[] = body.embedding_types ?? ['float'];
  const size = body.output_dimension ?? 4;
  const vector = (i: number) => Array.from({ length: size }, (_, j) => (i + 1) / 10 + j / 100);
  const embeddings: Record<string, unknown> = {};
  for (const type of types) embeddings[type] = texts.map((_, i) => vector(i));
  return json(res, 200, {
    id: randomUUID(),
    embeddings,
    texts,
    meta: {
      api_version: { version: '2' },
      billed_units: { input_tokens: texts.reduce<number>((n, t) => n + tokens(t as string), 0) },
    },
    response_type: 'embeddings_by_type',
  });
}

function rerank(res: ServerResponse, body: any) {
  const unknown = unknownField(body, RERANK_FIELDS);
  if (unknown) return fail(res, 400, `invalid request: json: unknown field "${unknown}"`);
  const documents: unknown[] = Array.isArray(body?.documents) ? body.documents : [];
  if (typeof body?.query !== 'string' || documents.length === 0 || !documents.every((d) => typeof d === 'string')) {
    return fail(res, 400, 'invalid request: query and documents (a list of strings) are required');
  }
  // Relevance: the documents sharing the most words with the query first.
  const words = new Set(body.query.toLowerCase().split(/\W+/));
  const score = (d: string) =>
    d
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => words.has(w)).length / (d.length || 1);
  const results = documents
    .map((d, index) => ({ index, relevance_score: Number(score(d as string).toFixed(4)) }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, body.top_n ?? documents.length);
  return json(res, 200, {
    id: randomUUID(),
    results,
    meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(documents.length / 100) } },
  });
}

import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Dify service API: `POST /v1/chat-messages` for chat and agent apps, `POST /v1/workflows/run`
 * for workflow apps, each app known by its key as Dify knows it. It refuses what Dify refuses (a bad
 * key, the wrong route for the app's mode, blocking mode for an agent app, a missing query or user,
 * a conversation of another user) with Dify's `{code, message, status}` body, and answers in Dify's
 * shapes: blocking JSON, and streams of `data: {"event": …}` lines with a `event: ping` keep-alive.
 */
export type DifyAppKind = 'chat' | 'agent' | 'workflow';

export interface RecordedDifyRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MockDifyBehaviour {
  /** Answer text, sent in chunks of a few characters when streaming; default "Hello from the Dify mock." */
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** A workflow run's total_tokens; default 42. */
  workflowTokens?: number;
  /** Break the stream with an error event after the first chunk. */
  streamError?: string;
  /** Workflow runs fail with this error (status failed, HTTP 200, as Dify reports it). */
  workflowError?: string;
}

export interface MockDify {
  url: string;
  requests: RecordedDifyRequest[];
  behaviour: MockDifyBehaviour;
  /** Conversation id → the user it belongs to. */
  conversations: Map<string, string>;
  close(): Promise<void>;
}

const DEFAULT_REPLY = 'Hello from the Dify mock.';

export async function startMockDify(apps: Record<string, DifyAppKind>): Promise<MockDify> {
  const requests: RecordedDifyRequest[] = [];
  const conversations = new Map<string, string>();
  const state: MockDify = {
    url: '',
    requests,
    behaviour: {},
    conversations,
    close: async () => {},
  };
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    const fail = (status: number, code: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code, message, status }));
    };
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const kind = key ? apps[key] : undefined;
    if (!kind) return fail(401, 'unauthorized', 'Access token is invalid');
    if (req.method !== 'POST' || (path !== '/v1/chat-messages' && path !== '/v1/workflows/run')) {
      return fail(404, 'not_found', 'The requested URL was not found on the server.');
    }
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail(400, 'bad_request', 'The browser (or proxy) sent a request that this server could not understand.');
    }
    requests.push({ path, headers: req.headers, body });
    if (path === '/v1/chat-messages' && kind === 'workflow') {
      return fail(400, 'not_chat_app', 'Please check if your app mode matches the right API route.');
    }
    if (path === '/v1/workflows/run' && kind !== 'workflow') {
      return fail(400, 'not_workflow_app', 'Please check if your app mode matches the right API route.');
    }
    if (typeof body.user !== 'string' || body.user === '') return fail(400, 'invalid_param', 'user is required');
    if (!['blocking', 'streaming'].includes(body.response_mode)) {
      return fail(400, 'invalid_param', 'response_mode must be blocking or streaming');
    }
    if (body.inputs === null || typeof body.inputs !== 'object')
      return fail(400, 'invalid_param', 'inputs is required');
    const reply = state.behaviour.reply ?? DEFAULT_REPLY;
    if (kind === 'workflow') return runWorkflow(res, body, reply, state.behaviour);
    if (typeof body.query !== 'string' || body.query === '') return fail(400, 'invalid_param', 'query is required');
    if (kind === 'agent' && body.response_mode === 'blocking') {
      return fail(400, 'invalid_param', 'Agent Chat App does not support blocking mode');
    }
    let conversation = body.conversation_id;
    if (conversation) {
      if (conversations.get(conversation) !== body.user) return fail(404, 'not_found', 'Conversation Not Exists.');
    } else {
      conversation = randomUUID();
      conversations.set(conversation, body.user);
    }
    const ids = { task_id: randomUUID(), message_id: randomUUID(), conversation_id: conversation };
    const usage = usageOf(state.behaviour, body.query, reply);
    if (body.response_mode === 'blocking') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          event: 'message',
          ...ids,
          id: ids.message_id,
          mode: 'chat',
          answer: reply,
          metadata: { usage, retriever_resources: [] },
          created_at: now(),
        }),
      );
      return;
    }
    const answerEvent = kind === 'agent' ? 'agent_message' : 'message';
    const events: string[] = ['event: ping\n\n'];
    if (kind === 'agent')
      events.push(data({ event: 'agent_thought', id: randomUUID(), position: 1, thought: '', tool: '', ...ids }));
    const pieces = reply.match(/.{1,5}/gs) ?? [];
    pieces.forEach((answer, i) => {
      events.push(data({ event: answerEvent, id: ids.message_id, ...ids, answer, created_at: now() }));
      if (i === 0 && state.behaviour.streamError) {
        events.push(
          data({
            event: 'error',
            ...ids,
            status: 400,
            code: 'completion_request_error',
            message: state.behaviour.streamError,
          }),
        );
      }
    });
    events.push(
      data({ event: 'message_end', id: ids.message_id, ...ids, metadata: { usage, retriever_resources: [] } }),
    );
    await stream(res, events);
  });
  state.url = server.url;
  state.close = server.close;
  return state;
}

async function runWorkflow(res: ServerResponse, body: any, reply: string, behaviour: MockDifyBehaviour) {
  const run = { workflow_run_id: randomUUID(), task_id: randomUUID() };
  const total = behaviour.workflowTokens ?? 42;
  const finished = {
    id: run.workflow_run_id,
    workflow_id: 'wf-mock',
    status: behaviour.workflowError ? 'failed' : 'succeeded',
    outputs: behaviour.workflowError ? null : { text: reply },
    error: behaviour.workflowError ?? null,
    elapsed_time: 0.5,
    total_tokens: total,
    total_steps: 3,
    created_at: now(),
    finished_at: now(),
  };
  if (typeof body.inputs.query !== 'string') {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 'invalid_param', message: 'query in input form must be a string', status: 400 }));
    return;
  }
  if (body.response_mode === 'blocking') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...run, data: finished }));
    return;
  }
  const events = [
    data({
      event: 'workflow_started',
      ...run,
      data: { id: run.workflow_run_id, workflow_id: 'wf-mock', created_at: now() },
    }),
    data({ event: 'node_started', ...run, data: { id: randomUUID(), node_type: 'llm', title: 'LLM', index: 1 } }),
    ...(reply.match(/.{1,5}/gs) ?? []).map((text) => data({ event: 'text_chunk', ...run, data: { text } })),
    data({ event: 'node_finished', ...run, data: { id: randomUUID(), node_type: 'llm', status: 'succeeded' } }),
    data({ event: 'workflow_finished', ...run, data: finished }),
  ];
  await stream(res, events);
}

function usageOf(behaviour: MockDifyBehaviour, query: string, reply: string) {
  const prompt = behaviour.usage?.prompt_tokens ?? Math.ceil(query.length / 4) + 20;
  const completion = behaviour.usage?.completion_tokens ?? Math.ceil(reply.length / 4);
  return {
    prompt_tokens: prompt,
    prompt_unit_price: '0.001',
    prompt_price_unit: '0.001',
    prompt_price: (prompt * 0.000001).toFixed(7),
    completion_tokens: completion,
    completion_unit_price: '0.002',
    completion_price_unit: '0.001',
    completion_price: (completion * 0.000002).toFixed(7),
    total_tokens: prompt + completion,
    total_price: '0.0000000',
    currency: 'USD',
    latency: 0.4,
  };
}

const now = () => Math.floor(Date.now() / 1000);
const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** Writes the events one by one, split at an awkward place (inside a line) as networks do. */
async function stream(res: ServerResponse, events: string[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const event of events) {
    const cut = Math.floor(event.length / 2);
    res.write(event.slice(0, cut));
    res.write(event.slice(cut));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

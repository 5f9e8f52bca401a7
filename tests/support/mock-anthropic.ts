import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CALL_ID, type AgentScript, agentStep, toolResultText } from './agent-script.ts';
import { type MockFault, type MockTraffic, serveMock } from './mock-server.ts';

/**
 * A local upstream that speaks Anthropic's Messages API as documented: `POST /v1/messages` with
 * `x-api-key` (or a bearer token) and `anthropic-version`, answers as a whole message or as a server-sent event stream
 * (`event:` + `data:` lines: message_start, content_block_start, ping, content_block_delta,
 * content_block_stop, message_delta, message_stop), errors as `{"type":"error","error":{…}}`, and
 * `GET /v1/models` in Anthropic's list shape. Every request is recorded; behaviour is scriptable.
 */
export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: Buffer;
}

export interface AnthropicBehaviour {
  /** Answer this status with a Claude error body instead of a message, for the next `times` requests. */
  failWith?: { status: number; type?: string; message?: string; times: number };
  /** Reply text; default "Hello from the mock." */
  reply?: string;
  /** Thinking text, sent when the request enables thinking; default "Let me think." */
  thinking?: string;
  /** The input of the tool call made when tools are offered; default {"city":"Paris"}. */
  toolInput?: Record<string, unknown>;
  /** Leave usage out of answers and streams (the relay must then estimate). */
  omitUsage?: boolean;
  /** Milliseconds between stream events. */
  chunkDelayMs?: number;
  /** Usage to report; default computed from the texts (4 characters a token), no cache. */
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number;
    /** Cache writes with the 5-minute TTL. */
    cache_creation_5m_input_tokens?: number;
    /** Cache writes with the 1-hour TTL. */
    cache_creation_1h_input_tokens?: number;
    web_search_requests?: number;
  };
  /** Keys refused with 401 authentication_error, as Anthropic refuses a revoked key. */
  refuseKeys?: string[];
  /** Streams only: after the first text delta, send an `error` event of this type and stop. */
  streamError?: { type: string; message: string };
  /** A coding agent's turn: requests offering its tool call it, then answer once its result is back. */
  agent?: AgentScript;
  /** A network fault to play on every answer (slow headers, a reset, a stall: mock-server.ts). */
  fault?: MockFault;
}

export interface MockAnthropic {
  url: string;
  requests: RecordedAnthropicRequest[];
  behaviour: AnthropicBehaviour;
  close(): Promise<void>;
  /** Requests received and aborted by the gateway (mock-server.ts). */
  readonly traffic: MockTraffic;
}

export const MOCK_ANTHROPIC_MODELS = [
  'claude-sonnet-4-20250514',
  'claude-opus-4-20250514',
  'claude-3-5-haiku-20241022',
];

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockAnthropic(): Promise<MockAnthropic> {
  const requests: RecordedAnthropicRequest[] = [];
  let behaviour: AnthropicBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      body = raw.toString();
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    requests.push({ method: req.method ?? '', path, headers: req.headers, body, raw });
    await handle(behaviour, req, res, path, body).catch((error: unknown) => {
      if (!res.headersSent) fail(res, 500, 'api_error', String(error));
      else res.end();
    });
  });
  server.playFaults(() => behaviour.fault);
  return {
    ...server,
    requests,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: AnthropicBehaviour) {
      behaviour = value;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_mock' });
  res.end(JSON.stringify(body));
}

function fail(res: ServerResponse, status: number, type: string, message: string) {
  json(res, status, { type: 'error', error: { type, message }, request_id: 'req_mock' });
}

async function handle(b: AnthropicBehaviour, req: IncomingMessage, res: ServerResponse, path: string, body: any) {
  // Anthropic takes the key in x-api-key; recent official SDKs send it as a bearer token instead.
  const bearer = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : undefined;
  const key = req.headers['x-api-key'] ?? bearer;
  if (typeof key !== 'string' || key === '')
    return fail(res, 401, 'authentication_error', 'x-api-key header is required');
  if (b.refuseKeys?.includes(key)) return fail(res, 401, 'authentication_error', 'invalid x-api-key');
  if (!req.headers['anthropic-version'])
    return fail(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
  if (b.failWith && b.failWith.times > 0) {
    b.failWith.times--;
    const status = b.failWith.status;
    const type = b.failWith.type ?? errorType(status);
    return fail(res, status, type, b.failWith.message ?? `mock failure ${status}`);
  }
  if (req.method === 'GET' && path === '/v1/models') {
    const data = MOCK_ANTHROPIC_MODELS.map((id) => ({
      type: 'model',
      id,
      display_name: id,
      created_at: '2025-05-14T00:00:00Z',
    }));
    return json(res, 200, { data, has_more: false, first_id: data[0]!.id, last_id: data.at(-1)!.id });
  }
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    return json(res, 200, { input_tokens: tokens(JSON.stringify([body?.system ?? '', body?.messages ?? []])) });
  }
  if (req.method === 'POST' && path === '/v1/messages') return messages(b, res, body);
  return fail(res, 404, 'not_found_error', `Not found: ${req.method} ${path}`);
}

function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

/** What Anthropic checks before answering: the parts a relay most easily gets wrong. */
function invalid(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'request body must be a JSON object';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: Field required';
  for (const [i, message] of body.messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant')
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content))
      return `messages.${i}.content: Field required`;
  }
  if (body.thinking?.type === 'enabled') {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be >= 1024';
    if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
    if (body.temperature !== undefined && body.temperature !== 1)
      return '`temperature` may only be set to 1 when thinking is enabled';
  }
  if (body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive') {
    // A tool loop keeps its thinking: the last assistant turn that called tools starts with a signed thinking block.
    const i = body.messages.findLastIndex((m: any) => m.role === 'assistant');
    const last = body.messages[i]?.content;
    const first = Array.isArray(last) && last.some((block: any) => block?.type === 'tool_use') ? last[0] : undefined;
    if (first && !(first.type === 'redacted_thinking' || (first.type === 'thinking' && first.signature))) {
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block`;
    }
  }
  if (typeof body.temperature === 'number' && (body.temperature < 0 || body.temperature > 1))
    return 'temperature: Input should be less than or equal to 1';
  return undefined;
}

/** Whether the model calls a tool: tools offered, not forbidden, and not just answered (unless forced). */
function wantsTool(body: any): boolean {
  const tools = Array.isArray(body.tools) ? body.tools.filter((t: any) => typeof t?.name === 'string') : [];
  if (tools.length === 0) return false;
  const choice = body.tool_choice?.type;
  if (choice === 'none') return false;
  if (choice === 'any' || choice === 'tool') return true;
  const last = body.messages.at(-1);
  return !(Array.isArray(last?.content) && last.content.some((block: any) => block?.type === 'tool_result'));
}

/** The text of the tool result answering the agent script's call, if the conversation holds one. */
function agentResult(messages: any[]): string | undefined {
  for (const message of messages) {
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      if (block?.type === 'tool_result' && block.tool_use_id === AGENT_CALL_ID) return toolResultText(block.content);
    }
  }
  return undefined;
}

function messages(b: AnthropicBehaviour, res: ServerResponse, body: any) {
  const problem = invalid(body);
  if (problem) return fail(res, 400, 'invalid_request_error', problem);
  const model: string = body.model;
  const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  const thinkingText = b.thinking ?? 'Let me think.';
  const offered: string[] = Array.isArray(body.tools) ? body.tools.map((t: any) => t?.name) : [];
  const step = agentStep(b.agent, offered, agentResult(body.messages));
  let tool: { id: string; name: string; input: Record<string, unknown> } | undefined;
  if (step?.kind === 'call') tool = { id: step.id, name: step.name, input: step.input };
  else if (!step && wantsTool(body)) {
    const offer =
      body.tool_choice?.type === 'tool' ? body.tools.find((t: any) => t.name === body.tool_choice.name) : body.tools[0];
    tool = { id: 'toolu_mock_1', name: offer.name, input: b.toolInput ?? { city: 'Paris' } };
  }

  // The reply, cut where Claude would stop: a stop sequence, or max_tokens.
  let reply = step?.kind === 'answer' ? step.text : (b.reply ?? 'Hello from the mock.');
  let stopReason = tool ? 'tool_use' : 'end_turn';
  let stopSequence: string | null = null;
  if (!tool) {
    for (const sequence of Array.isArray(body.stop_sequences) ? body.stop_sequences : []) {
      const at = typeof sequence === 'string' && sequence !== '' ? reply.indexOf(sequence) : -1;
      if (at !== -1) {
        reply = reply.slice(0, at);
        stopReason = 'stop_sequence';
        stopSequence = sequence;
        break;
      }
    }
    if (stopSequence === null && tokens(reply) > body.max_tokens) {
      reply = reply.slice(0, body.max_tokens * 4);
      stopReason = 'max_tokens';
    }
  }

  const content: any[] = [];
  if (thinking) content.push({ type: 'thinking', thinking: thinkingText, signature: 'sig_mock_thinking' });
  if (tool) content.push({ type: 'tool_use', ...tool });
  else content.push({ type: 'text', text: reply });

  const promptText = JSON.stringify([body.system ?? '', body.messages, body.tools ?? []]);
  const output = tokens((thinking ? thinkingText : '') + (tool ? JSON.stringify(tool.input) : reply));
  const u = b.usage;
  const write5m = u?.cache_creation_5m_input_tokens ?? 0;
  const write1h = u?.cache_creation_1h_input_tokens ?? 0;
  const usage: any = {
    input_tokens: u?.input_tokens ?? tokens(promptText),
    cache_creation_input_tokens: write5m + write1h,
    cache_read_input_tokens: u?.cache_read_input_tokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
    output_tokens: u?.output_tokens ?? output,
    service_tier: 'standard',
    ...(u?.web_search_requests ? { server_tool_use: { web_search_requests: u.web_search_requests } } : {}),
  };

  const message = {
    id: 'msg_mock_1',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    ...(b.omitUsage ? {} : { usage }),
  };
  if (body.stream !== true) return json(res, 200, message);
  return stream(b, res, message, usage);
}

async function stream(b: AnthropicBehaviour, res: ServerResponse, message: any, usage: any) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': 'req_mock' });
  const send = async (type: string, data: object) => {
    if (res.destroyed) return;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    if (b.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, b.chunkDelayMs));
  };
  const pieces = (text: string) => text.match(/.{1,5}/gs) ?? [];
  const startUsage = b.omitUsage ? undefined : { ...usage, output_tokens: 1 };
  await send('message_start', {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(startUsage ? { usage: startUsage } : {}),
    },
  });
  for (const [index, block] of message.content.entries()) {
    if (block.type === 'thinking') {
      await send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      if (index === 0) await send('ping', {});
      for (const piece of pieces(block.thinking))
        await send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      await send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'tool_use') {
      await send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      if (index === 0) await send('ping', {});
      await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const piece of pieces(JSON.stringify(block.input)))
        await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    } else {
      await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) await send('ping', {});
      for (const piece of pieces(block.text)) {
        await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
        if (b.streamError) {
          await send('error', { error: b.streamError });
          res.end();
          return;
        }
      }
    }
    await send('content_block_stop', { index });
  }
  const { service_tier: _tier, cache_creation: _creation, ...deltaUsage } = usage;
  await send('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    ...(b.omitUsage ? {} : { usage: deltaUsage }),
  });
  await send('message_stop', {});
  res.end();
}

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CALL_ID, type AgentScript, agentStep, toolResultText } from './agent-script.ts';
import { type MockFault, type MockTraffic, serveMock } from './mock-server.ts';

/**
 * A local upstream that speaks OpenAI's HTTP protocol (the documented request and response bodies,
 * SSE streaming with `data:` events and `[DONE]`), so the relay can be tested end to end with the
 * official SDK on the client side. Every request is recorded; behaviour can be scripted per test.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: Buffer;
}

export interface MockBehaviour {
  /** Answer this status with an OpenAI error body instead of a result, for the next `times` requests. */
  failWith?: { status: number; message?: string; code?: string; times: number };
  /** Reply text for chat/completions/responses; default "Hello from the mock." */
  reply?: string;
  /** Leave usage out of answers and streams (the relay must then estimate). */
  omitUsage?: boolean;
  /** Milliseconds between stream chunks. */
  chunkDelayMs?: number;
  /** Usage to report; default computed from the texts (4 characters a token). */
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    cached_tokens?: number;
    audio_input_tokens?: number;
    audio_output_tokens?: number;
  };
  /** Keys (without "Bearer ") refused with 401 invalid_api_key, as OpenAI refuses a revoked key. */
  refuseKeys?: string[];
  /** Responses: web_search_call items to put in the output. */
  webSearchCalls?: number;
  /** Transcriptions: report the audio duration as usage (`{type: "duration"}`), as whisper-1 does. */
  transcriptionSeconds?: number;
  /** A coding agent's turn (chat and Responses): requests offering its tool call it, then answer once its result is back. */
  agent?: AgentScript;
  /** A network fault to play on every answer (slow headers, a reset, a stall: mock-server.ts). */
  fault?: MockFault;
}

export interface MockOpenAI {
  url: string;
  requests: RecordedRequest[];
  behaviour: MockBehaviour;
  close(): Promise<void>;
  /** Requests received and aborted by the gateway (mock-server.ts). */
  readonly traffic: MockTraffic;
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockOpenAI(): Promise<MockOpenAI> {
  const requests: RecordedRequest[] = [];
  let behaviour: MockBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const type = req.headers['content-type'] ?? '';
    let body: any;
    try {
      body = type.includes('application/json') && raw.length ? JSON.parse(raw.toString()) : raw.toString('latin1');
    } catch {
      body = raw.toString();
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    requests.push({ method: req.method ?? '', path, headers: req.headers, body, raw });
    await handle(behaviour, req, res, path, body);
  });
  server.playFaults(() => behaviour.fault);
  return {
    ...server,
    requests,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: MockBehaviour) {
      behaviour = value;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function handle(b: MockBehaviour, req: IncomingMessage, res: ServerResponse, path: string, body: any) {
  if (!req.headers.authorization?.startsWith('Bearer ') && !req.headers['api-key']) {
    return json(res, 401, {
      error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
    });
  }
  const key = req.headers.authorization?.slice('Bearer '.length) ?? '';
  if (b.refuseKeys?.includes(key)) {
    return json(res, 401, {
      error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
    });
  }
  if (b.failWith && b.failWith.times > 0) {
    b.failWith.times--;
    return json(res, b.failWith.status, {
      error: {
        message: b.failWith.message ?? `mock failure ${b.failWith.status}`,
        type: 'server_error',
        code: b.failWith.code ?? null,
      },
    });
  }
  const reply = b.reply ?? 'Hello from the mock.';
  const model = typeof body === 'object' && body ? body.model : 'mock-model';
  const promptText = JSON.stringify(body?.messages ?? body?.prompt ?? body?.input ?? '');
  const usage = {
    prompt_tokens: b.usage?.prompt_tokens ?? tokens(promptText),
    completion_tokens: b.usage?.completion_tokens ?? tokens(reply),
    total_tokens: 0,
    prompt_tokens_details: {
      cached_tokens: b.usage?.cached_tokens ?? 0,
      audio_tokens: b.usage?.audio_input_tokens ?? 0,
    },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: b.usage?.audio_output_tokens ?? 0 },
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;

  switch (path) {
    case '/v1/chat/completions':
      return chat(b, res, body, model, reply, usage);
    case '/v1/completions':
      return json(res, 200, {
        id: 'cmpl-mock',
        object: 'text_completion',
        created: 1,
        model,
        choices: [{ index: 0, text: reply, finish_reason: 'stop', logprobs: null }],
        ...(b.omitUsage ? {} : { usage }),
      });
    case '/v1/responses':
      return responses(b, res, body, model, reply, usage);
    case '/v1/responses/compact':
      return json(res, 200, {
        id: 'resp_compact_mock',
        object: 'response.compaction',
        created_at: 1,
        output: [
          ...(Array.isArray(body.input) ? body.input.filter((item: any) => item?.role === 'user') : []),
          { type: 'compaction', id: 'cmp_mock', encrypted_content: 'compacted-by-the-mock' },
        ],
        usage: responsesUsage(usage),
      });
    case '/v1/embeddings': {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(res, 200, {
        object: 'list',
        model,
        data: inputs.map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
        usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens },
      });
    }
    case '/v1/images/generations':
      return json(res, 200, {
        created: 1,
        data: Array.from({ length: body.n ?? 1 }, (_, i) => ({
          url: `https://images.example/${i}.png`,
          revised_prompt: body.prompt,
        })),
      });
    case '/v1/audio/speech':
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      return res.end(Buffer.from('ID3-mock-audio'));
    case '/v1/audio/transcriptions':
    case '/v1/audio/translations': {
      // The multipart body is kept as latin1 text: enough to read a plain form field.
      const format = /name="response_format"\r\n\r\n([a-z_]+)/.exec(String(body))?.[1] ?? 'json';
      if (format === 'text') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end(reply);
      }
      const seconds = b.transcriptionSeconds;
      return json(res, 200, { text: reply, ...(seconds ? { usage: { type: 'duration', seconds } } : {}) });
    }
    case '/v1/moderations':
      return json(res, 200, {
        id: 'modr-mock',
        model,
        results: [{ flagged: false, categories: {}, category_scores: {} }],
      });
    case '/v1/rerank':
      return json(res, 200, {
        results: (body.documents ?? []).map((_: unknown, index: number) => ({
          index,
          relevance_score: 1 / (index + 1),
        })),
        usage: { total_tokens: usage.prompt_tokens },
      });
    case '/v1/models':
      return json(res, 200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model', owned_by: 'mock' }] });
    default:
      return json(res, 404, {
        error: { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error' },
      });
  }
}

async function chat(b: MockBehaviour, res: ServerResponse, body: any, model: string, reply: string, usage: object) {
  const offered: string[] = Array.isArray(body.tools) ? body.tools.map((t: any) => t?.function?.name) : [];
  const result = (body.messages ?? []).find((m: any) => m?.role === 'tool' && m.tool_call_id === AGENT_CALL_ID);
  const step = agentStep(b.agent, offered, result ? toolResultText(result.content) : undefined);
  const wantsTool = step
    ? step.kind === 'call'
    : Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none';
  if (step?.kind === 'answer') reply = step.text;
  const toolCall = !wantsTool
    ? undefined
    : step?.kind === 'call'
      ? { id: step.id, type: 'function', function: { name: step.name, arguments: JSON.stringify(step.input) } }
      : {
          id: 'call_mock_1',
          type: 'function',
          function: { name: body.tools[0].function.name, arguments: '{"city":"Paris"}' },
        };
  if (!body.stream) {
    return json(res, 200, {
      id: 'chatcmpl-mock',
      object: 'chat.completion',
      created: 1,
      model,
      choices: [
        {
          index: 0,
          message: toolCall
            ? { role: 'assistant', content: null, tool_calls: [toolCall] }
            : { role: 'assistant', content: reply },
          finish_reason: toolCall ? 'tool_calls' : 'stop',
        },
      ],
      ...(b.omitUsage ? {} : { usage }),
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = async (data: unknown) => {
    res.write(`data: ${JSON.stringify(data)}\n\n`);
    if (b.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, b.chunkDelayMs));
  };
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model };
  await send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  if (toolCall) {
    await send({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...toolCall }] }, finish_reason: null }],
    });
  } else {
    for (const piece of reply.match(/.{1,5}/gs) ?? []) {
      if (res.destroyed) return;
      await send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
  }
  await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: toolCall ? 'tool_calls' : 'stop' }] });
  if (!b.omitUsage && body.stream_options?.include_usage) await send({ ...base, choices: [], usage });
  res.end('data: [DONE]\n\n');
}

/** Chat usage → the Responses spelling (input/output tokens, cached input in its details). */
function responsesUsage(usage: any) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

async function responses(b: MockBehaviour, res: ServerResponse, body: any, model: string, reply: string, usage: any) {
  const input = Array.isArray(body.input) ? body.input : [];
  const offered: string[] = Array.isArray(body.tools)
    ? body.tools.filter((t: any) => t?.type === 'function').map((t: any) => t.name)
    : [];
  const result = input.find((item: any) => item?.type === 'function_call_output' && item.call_id === AGENT_CALL_ID);
  const step = agentStep(b.agent, offered, result ? toolResultText(result.output) : undefined);
  const searches = Array.from({ length: b.webSearchCalls ?? 0 }, (_, i) => ({
    type: 'web_search_call',
    id: `ws_${i}`,
    status: 'completed',
    action: { type: 'search', query: 'q' },
  }));
  const text = step?.kind === 'answer' ? step.text : reply;
  const answer =
    step?.kind === 'call'
      ? {
          type: 'function_call',
          id: 'fc_mock_1',
          call_id: step.id,
          name: step.name,
          arguments: JSON.stringify(step.input),
          status: 'completed',
        }
      : {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text, annotations: [] }],
        };
  // A reasoning model asked for an effort thinks first; a stateless client gets the reasoning back encrypted.
  const reasoning =
    typeof body.reasoning?.effort === 'string' && body.reasoning.effort !== 'none'
      ? [
          {
            type: 'reasoning',
            id: 'rs_mock_1',
            summary: [{ type: 'summary_text', text: 'Let me think.' }],
            encrypted_content: 'enc_mock_reasoning',
          },
        ]
      : [];
  const output: any[] = [...searches, ...reasoning, answer];
  const response = {
    id: 'resp_mock',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model,
    output,
    ...(b.omitUsage ? {} : { usage: responsesUsage(usage) }),
  };
  if (!body.stream) return json(res, 200, response);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const send = (type: string, data: object) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  send('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  send('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  for (const [index, item] of output.entries()) {
    const output_index = index;
    if (item.type === 'message') {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { type: 'output_text', text: '', annotations: [] };
      send('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
      for (const piece of text.match(/.{1,5}/gs) ?? [])
        send('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: piece });
      send('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text });
      send('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of args.match(/.{1,5}/gs) ?? [])
        send('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: piece });
      send('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: args });
    } else if (item.type === 'reasoning') {
      send('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      const part = { type: 'summary_text', text: '' };
      for (const [summary_index, summary] of item.summary.entries()) {
        send('response.reasoning_summary_part.added', { item_id: item.id, output_index, summary_index, part });
        send('response.reasoning_summary_text.delta', {
          item_id: item.id,
          output_index,
          summary_index,
          delta: summary.text,
        });
        send('response.reasoning_summary_text.done', {
          item_id: item.id,
          output_index,
          summary_index,
          text: summary.text,
        });
        send('response.reasoning_summary_part.done', { item_id: item.id, output_index, summary_index, part: summary });
      }
    } else {
      send('response.output_item.added', { output_index, item });
    }
    send('response.output_item.done', { output_index, item });
  }
  send('response.completed', { response });
  res.end();
}

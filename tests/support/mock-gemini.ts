import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type MockFault, type MockTraffic, serveMock } from './mock-server.ts';
import { VeoOperations } from './veo-operations.ts';

/**
 * A local upstream that speaks Google's Gemini REST protocol (generateContent, streamGenerateContent
 * with `alt=sse` data events or as one JSON array without it, embedContent, batchEmbedContents and the
 * model list), so the relay can be tested end to end with the official `@google/genai` client or with
 * other formats converted to Gemini. Every request is recorded; behaviour can be scripted per test.
 * Veo: `POST /v1beta/models/veo-…:predictLongRunning` answers an operation `models/{model}/operations/{id}`,
 * `GET /v1beta/{operation}` advances it (`veo`), a finished video's URI `…/files/{id}:download?alt=media`
 * takes the key and redirects to a signed `/download/{id}?signature=…` that needs no key (as Google's
 * redirects to storage), so the content can be fetched only with the key, and the key need not follow.
 */
export interface RecordedGeminiRequest {
  method: string;
  /** The path without the query, e.g. `/v1beta/models/gemini-2.5-flash:generateContent`. */
  path: string;
  /** The path with its query, e.g. `…:streamGenerateContent?alt=sse`. */
  url: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The API version, model and method the path named (undefined for other paths). */
  version?: string;
  model?: string;
  action?: string;
  body: any;
  raw: Buffer;
}

export interface GeminiUsageScript {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface MockGeminiBehaviour {
  /** Answer this HTTP status with a Google error body instead of a result, for the next `times` requests. */
  failWith?: { status: number; message?: string; reason?: string; times: number };
  /** Reply text; default "Hello from the Gemini mock." */
  reply?: string;
  /** Thought summary sent when the request asks for thoughts (thinkingConfig.includeThoughts). */
  thought?: string;
  /** Arguments of the function call made when tools are offered; default `{"city":"Paris"}`. */
  functionArgs?: Record<string, unknown>;
  /** Finish reason of the candidate; default STOP. */
  finishReason?: string;
  /** Block the prompt: no candidates, promptFeedback.blockReason set to this. */
  blockReason?: string;
  /** Token counts to report; by default computed from the texts (4 characters a token). */
  usage?: GeminiUsageScript;
  /** Leave usageMetadata out of answers and streams (the relay must then estimate). */
  omitUsage?: boolean;
  /** Milliseconds between stream chunks. */
  chunkDelayMs?: number;
  /** Keys accepted; any other is refused with 400 API_KEY_INVALID. Unset: any non-empty key is accepted. */
  validKeys?: string[];
  /** Keys refused with 400 API_KEY_INVALID, as Google refuses a deleted key. */
  refuseKeys?: string[];
  /** Vector returned for each embedded text; default [0.1, 0.2, 0.3]. */
  embedding?: number[];
  /** Models listed by GET /{version}/models. */
  models?: Array<{ name: string; supportedGenerationMethods: string[]; displayName?: string }>;
  /** A network fault to play on every answer (slow headers, a reset, a stall: mock-server.ts). */
  fault?: MockFault;
}

export interface MockGemini {
  url: string;
  requests: RecordedGeminiRequest[];
  behaviour: MockGeminiBehaviour;
  /** Veo's operations, and how the next one ends. */
  veo: VeoOperations;
  close(): Promise<void>;
  /** Requests received and aborted by the gateway (mock-server.ts). */
  readonly traffic: MockTraffic;
}

const DEFAULT_MODELS: NonNullable<MockGeminiBehaviour['models']> = [
  {
    name: 'models/gemini-2.5-flash',
    displayName: 'Gemini 2.5 Flash',
    supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
  },
  {
    name: 'models/gemini-2.5-pro',
    displayName: 'Gemini 2.5 Pro',
    supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
  },
  {
    name: 'models/gemini-embedding-001',
    displayName: 'Gemini Embedding 001',
    supportedGenerationMethods: ['embedContent', 'countTextTokens', 'countTokens'],
  },
];

const MOCK_SIGNATURE = 'bW9jay10aG91Z2h0LXNpZ25hdHVyZQ==';

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockGemini(): Promise<MockGemini> {
  const requests: RecordedGeminiRequest[] = [];
  let behaviour: MockGeminiBehaviour = {};
  const veo = new VeoOperations();
  const files = new VideoFiles(veo);
  const server = await serveMock(async (req, res, raw) => {
    let body: any;
    try {
      body = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      body = raw.toString();
    }
    const url = req.url ?? '';
    const parsed = new URL(url, 'http://mock');
    const route = /^\/(v1beta|v1|v1alpha)\/models\/([^:/]+):([A-Za-z]+)$/.exec(parsed.pathname);
    const record: RecordedGeminiRequest = {
      method: req.method ?? '',
      path: parsed.pathname,
      url,
      query: parsed.searchParams,
      headers: req.headers,
      body,
      raw,
    };
    if (route) {
      record.version = route[1];
      record.model = decodeURIComponent(route[2]!);
      record.action = route[3];
    }
    requests.push(record);
    await handle(behaviour, req, res, record, files).catch((error: unknown) => {
      if (!res.headersSent) googleError(res, 500, String(error));
      else res.end();
    });
  });
  server.playFaults(() => behaviour.fault);
  return {
    ...server,
    requests,
    veo,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: MockGeminiBehaviour) {
      behaviour = value;
    },
  };
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

/** Google's error body: `{"error": {"code", "message", "status", "details"?}}`. */
function googleError(res: ServerResponse, status: number, message: string, reason?: string) {
  const error: Record<string, unknown> = { code: status, message, status: STATUS[status] ?? 'UNKNOWN' };
  if (reason) {
    error.details = [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason,
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ];
  }
  json(res, status, { error });
}

/** Finished Veo videos as Gemini's files: the download takes the key and redirects to a signed address. */
class VideoFiles {
  readonly #secret = randomBytes(16);
  readonly veo: VeoOperations;
  constructor(veo: VeoOperations) {
    this.veo = veo;
  }

  signature(id: string): string {
    return createHmac('sha256', this.#secret).update(id).digest('base64url');
  }

  /** `/download/{id}?signature=…`: the video's bytes for a good signature, whoever asks. */
  serveSigned(res: ServerResponse, r: RecordedGeminiRequest): boolean {
    const signed = /^\/download\/([^/]+)$/.exec(r.path);
    if (!signed) return false;
    if (r.query.get('signature') !== this.signature(signed[1]!)) {
      googleError(res, 403, 'The signature of the download address does not match.');
      return true;
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': this.veo.content.length });
    res.end(this.veo.content);
    return true;
  }
}

/** `GET /{version}/models/{model}/operations/{id}` in Gemini's shape; false for other paths. */
function answerOperation(files: VideoFiles, req: IncomingMessage, res: ServerResponse, r: RecordedGeminiRequest) {
  if (req.method !== 'GET' || !/^\/v1beta\/models\/[^/]+\/operations\/[^/]+$/.test(r.path)) return false;
  const name = r.path.slice('/v1beta/'.length);
  const operation = files.veo.ask(name);
  if (!operation) {
    googleError(res, 404, `Operation ${name} not found.`);
    return true;
  }
  if (!operation.done) {
    json(res, 200, { name });
    return true;
  }
  if (typeof operation.outcome === 'object') {
    json(res, 200, { name, done: true, error: { code: 3, message: operation.outcome.error } });
    return true;
  }
  const id = name.split('/').at(-1)!;
  const generateVideoResponse =
    operation.outcome === 'filtered'
      ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt was blocked by the safety filters.'] }
      : { generatedSamples: [{ video: { uri: `http://${req.headers.host}/v1beta/files/${id}:download?alt=media` } }] };
  json(res, 200, {
    name,
    done: true,
    response: {
      '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
      generateVideoResponse,
    },
  });
  return true;
}

/** `GET /v1beta/files/{id}:download?alt=media` (with the key): a redirect to the signed address. */
function answerDownload(files: VideoFiles, res: ServerResponse, r: RecordedGeminiRequest, host: string) {
  const download = /^\/v1beta\/files\/([^/:]+):download$/.exec(r.path);
  if (!download) return false;
  const id = download[1]!;
  const known = [...files.veo.operations.keys()].some((name) => name.endsWith(`/operations/${id}`));
  if (!known || r.query.get('alt') !== 'media') {
    googleError(res, 404, `File ${id} not found.`);
    return true;
  }
  res.writeHead(302, { location: `http://${host}/download/${id}?signature=${files.signature(id)}` });
  res.end();
  return true;
}

async function handle(
  b: MockGeminiBehaviour,
  req: IncomingMessage,
  res: ServerResponse,
  r: RecordedGeminiRequest,
  files: VideoFiles,
) {
  if (files.serveSigned(res, r)) return;
  const header = req.headers['x-goog-api-key'];
  const key = (Array.isArray(header) ? header[0] : header) ?? r.query.get('key') ?? '';
  if (!key) {
    return googleError(
      res,
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      'SERVICE_DISABLED',
    );
  }
  if (b.refuseKeys?.includes(key) || (b.validKeys && !b.validKeys.includes(key))) {
    return googleError(res, 400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
  }
  if (b.failWith && b.failWith.times > 0) {
    b.failWith.times--;
    return googleError(
      res,
      b.failWith.status,
      b.failWith.message ?? `mock failure ${b.failWith.status}`,
      b.failWith.reason,
    );
  }

  if (req.method === 'GET' && /^\/(v1beta|v1)\/models\/?$/.test(r.path)) {
    const models = (b.models ?? DEFAULT_MODELS).map((model) => ({
      version: '001',
      displayName: model.name.replace(/^models\//, ''),
      description: 'A model served by the Gemini mock.',
      inputTokenLimit: 1048576,
      outputTokenLimit: 65536,
      ...model,
    }));
    return json(res, 200, { models });
  }
  if (answerOperation(files, req, res, r) || answerDownload(files, res, r, String(req.headers.host))) return;
  if (req.method !== 'POST' || !r.action || !r.model) {
    return googleError(res, 404, `Requested entity was not found. (${req.method} ${r.path})`);
  }
  if (typeof r.body !== 'object' || r.body === null) {
    return googleError(res, 400, 'Invalid JSON payload received.');
  }
  switch (r.action) {
    case 'predictLongRunning': {
      const refused = files.veo.check(r.model, r.body, { gcsImages: false });
      if (refused) return googleError(res, refused.status, refused.message);
      return json(res, 200, { name: files.veo.create(`models/${r.model}`, r.model, r.body).name });
    }
    case 'generateContent':
      return json(res, 200, answer(b, r.body, r.model));
    case 'streamGenerateContent':
      return stream(b, res, r);
    case 'embedContent':
      if (!r.body.content) return googleError(res, 400, '* EmbedContentRequest.content: contents is not specified');
      return json(res, 200, { embedding: { values: b.embedding ?? [0.1, 0.2, 0.3] } });
    case 'batchEmbedContents': {
      const list = Array.isArray(r.body.requests) ? r.body.requests : [];
      const wrong = list.find((item: any) => item?.model !== `models/${r.model}`);
      if (list.length === 0 || wrong) {
        return googleError(
          res,
          400,
          wrong
            ? `Model name in the request (${wrong?.model}) does not match the model in the URL (models/${r.model}).`
            : '* BatchEmbedContentsRequest.requests: requests is not specified',
        );
      }
      return json(res, 200, { embeddings: list.map(() => ({ values: b.embedding ?? [0.1, 0.2, 0.3] })) });
    }
    default:
      return googleError(res, 404, `Method ${r.action} was not found for models/${r.model}.`);
  }
}

interface Plan {
  parts: any[];
  finishReason: string;
  usage: Record<string, number>;
}

/** What the mock model answers to a request: thoughts, a function call or text, and the counts. */
function plan(b: MockGeminiBehaviour, body: any): Plan {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const declarations = (Array.isArray(body.tools) ? body.tools : []).flatMap((tool: any) =>
    Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : [],
  );
  const calling = body.toolConfig?.functionCallingConfig ?? {};
  const lastParts = contents.at(-1)?.parts ?? [];
  const answered = lastParts.some((part: any) => part?.functionResponse);
  const name = calling.allowedFunctionNames?.[0] ?? declarations[0]?.name;
  const wantsTool = declarations.length > 0 && calling.mode !== 'NONE' && !answered && name;
  const thinking = body.generationConfig?.thinkingConfig;
  const thoughts = thinking?.includeThoughts === true && thinking.thinkingBudget !== 0;
  const reply = b.reply ?? 'Hello from the Gemini mock.';
  const thoughtText = b.thought ?? 'Thinking about the answer.';

  const parts: any[] = [];
  if (thoughts) parts.push({ text: thoughtText, thought: true });
  if (wantsTool) {
    parts.push({ functionCall: { name, args: b.functionArgs ?? { city: 'Paris' } } });
  } else {
    parts.push({ text: reply });
  }
  if (thoughts) parts.at(-1).thoughtSignature = MOCK_SIGNATURE;

  const u = b.usage ?? {};
  const promptTokenCount =
    u.promptTokenCount ?? tokens(JSON.stringify(contents) + JSON.stringify(body.systemInstruction ?? ''));
  const candidatesTokenCount = u.candidatesTokenCount ?? tokens(wantsTool ? JSON.stringify(parts.at(-1)) : reply);
  const thoughtsTokenCount = u.thoughtsTokenCount ?? (thoughts ? tokens(thoughtText) : 0);
  const usage: Record<string, number> = { promptTokenCount, candidatesTokenCount };
  if (u.cachedContentTokenCount) usage.cachedContentTokenCount = u.cachedContentTokenCount;
  if (u.toolUsePromptTokenCount) usage.toolUsePromptTokenCount = u.toolUsePromptTokenCount;
  if (thoughtsTokenCount) usage.thoughtsTokenCount = thoughtsTokenCount;
  usage.totalTokenCount =
    promptTokenCount + candidatesTokenCount + thoughtsTokenCount + (u.toolUsePromptTokenCount ?? 0);
  return { parts, finishReason: b.finishReason ?? 'STOP', usage };
}

const RESPONSE_ID = 'mock-response-1';

function answer(b: MockGeminiBehaviour, body: any, model: string) {
  const { parts, finishReason, usage } = plan(b, body);
  const base = { modelVersion: model, responseId: RESPONSE_ID };
  if (b.blockReason) {
    return {
      promptFeedback: { blockReason: b.blockReason },
      ...(b.omitUsage ? {} : { usageMetadata: usage }),
      ...base,
    };
  }
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
    ...(b.omitUsage ? {} : { usageMetadata: usage }),
    ...base,
  };
}

async function stream(b: MockGeminiBehaviour, res: ServerResponse, r: RecordedGeminiRequest) {
  const { parts, finishReason, usage } = plan(b, r.body);
  const base = { modelVersion: r.model, responseId: RESPONSE_ID };
  // Each chunk carries the usage so far (the prompt's count from the start), the last one all of it.
  const partial = { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount };
  const chunks: any[] = [];
  if (b.blockReason) {
    chunks.push({ promptFeedback: { blockReason: b.blockReason }, ...base });
  } else {
    const pieces: any[] = [];
    for (const part of parts) {
      if (typeof part.text === 'string' && !part.thought) {
        const texts = part.text.match(/.{1,8}/gs) ?? [''];
        texts.forEach((text: string, i: number) => {
          const piece: any = { text };
          if (i === texts.length - 1 && part.thoughtSignature) piece.thoughtSignature = part.thoughtSignature;
          pieces.push(piece);
        });
      } else {
        pieces.push(part);
      }
    }
    pieces.forEach((piece, i) => {
      const last = i === pieces.length - 1;
      chunks.push({
        candidates: [{ content: { parts: [piece], role: 'model' }, ...(last ? { finishReason } : {}), index: 0 }],
        ...base,
      });
    });
  }
  chunks.forEach((chunk, i) => {
    if (!b.omitUsage) chunk.usageMetadata = i === chunks.length - 1 ? usage : partial;
  });

  if (r.query.get('alt') !== 'sse') {
    // Without alt=sse Google streams a single JSON array of the chunks.
    return json(res, 200, chunks);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    if (b.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, b.chunkDelayMs));
  }
  res.end();
}

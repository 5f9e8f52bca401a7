import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequest, MessageHeaders } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { serveMock } from './mock-server.ts';

/**
 * A local AWS Bedrock runtime: `POST /model/{modelId}/invoke`, `/invoke-with-response-stream`,
 * `/converse` and `/converse-stream`, as the service checks and answers them.
 * - Auth: a SigV4 `Authorization` header whose signature is recomputed with AWS's own signer
 *   (@smithy/signature-v4) from the signed headers, path, query and body — refused with Bedrock's 403
 *   `{"message"}` and `x-amzn-errortype` otherwise — or a Bedrock API key as a Bearer token.
 * - InvokeModel takes the Anthropic Messages body in Bedrock's form (`anthropic_version`
 *   bedrock-2023-05-31, no `model`, no `stream`) and answers Claude's message; its stream is AWS
 *   event-stream framing (AWS's own codec) of `chunk` events holding base64 Claude stream events.
 * - Converse takes messages/system/inferenceConfig/toolConfig and answers output.message, stopReason,
 *   usage; ConverseStream sends messageStart … metadata events.
 * - Models Bedrock serves only through an inference profile are refused by their bare id.
 * - The control plane's ListFoundationModels (`GET /foundation-models`, same SigV4 service `bedrock`)
 *   answers `modelSummaries` of a small catalogue, filtered by `byOutputModality`/`byProvider`/`byInferenceType`.
 * Every request is recorded; behaviour is scriptable.
 */
export interface RecordedBedrockRequest {
  path: string;
  modelId: string;
  operation: string;
  headers: IncomingHttpHeaders;
  body: any;
  auth: 'sigv4' | 'api-key';
  /** The region of the SigV4 credential scope. */
  region?: string;
}

export interface BedrockBehaviour {
  /** Reply text; default "Hello from Bedrock." */
  reply?: string;
  /** Claude's thinking text, sent when the request enables thinking; default "Let me think." */
  thinking?: string;
  /** The input of the tool call made when tools are offered; default {"city":"Paris"}. */
  toolInput?: Record<string, unknown>;
  /** Claude's usage for InvokeModel answers; default computed from the texts. */
  claudeUsage?: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Converse's usage; default computed from the texts. */
  converseUsage?: { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number };
  /** Answer this error for the next `times` requests. */
  failWith?: { status: number; type: string; message: string; times: number };
  /** Streams only: after the first text delta, an exception message of this type, and the end. */
  streamException?: { type: string; message: string };
}

export interface MockBedrock {
  url: string;
  requests: RecordedBedrockRequest[];
  behaviour: BedrockBehaviour;
  credentials: { accessKeyId: string; secretAccessKey: string };
  apiKey: string;
  close(): Promise<void>;
}

export const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** Bedrock ids AWS serves on demand only through a cross-region inference profile. */
const PROFILE_ONLY = /^anthropic\.claude-(3-5-haiku|3-7-sonnet|sonnet-4|opus-4|haiku-4-5)/;
const PROFILE_PREFIX = /^(us|eu|apac|us-gov|global)\./;
const CONVERSE_FIELDS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
/** Bedrock pads event payloads with a `p` field of varying length (against length side channels). */
const padding = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ';

export async function startMockBedrock(): Promise<MockBedrock> {
  const credentials = { accessKeyId: 'AKIAMOCKBEDROCK00001', secretAccessKey: 'mock/Secret+Access+Key' };
  const apiKey = 'ABSKbW9jay1iZWRyb2NrLWFwaS1rZXk=';
  const requests: RecordedBedrockRequest[] = [];
  let behaviour: BedrockBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const auth = await authenticate(req, url, raw, credentials, apiKey);
    if ('refusal' in auth) return fail(res, 403, auth.refusal.type, auth.refusal.message);
    if (url.pathname === '/foundation-models') {
      if (req.method !== 'GET') return fail(res, 404, 'UnknownOperationException', 'Unknown operation');
      requests.push({
        path: url.pathname,
        modelId: '',
        operation: 'list-foundation-models',
        headers: req.headers,
        body: undefined,
        ...auth,
      });
      return listFoundationModels(url, res);
    }
    const route = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(
      url.pathname,
    );
    if (req.method !== 'POST' || !route) return fail(res, 404, 'UnknownOperationException', 'Unknown operation');
    const modelId = decodeURIComponent(route[1] as string);
    const operation = route[2] as string;
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail(
        res,
        400,
        'ValidationException',
        'Malformed input request, please reformat your input and try again.',
      );
    }
    requests.push({ path: url.pathname, modelId, operation, headers: req.headers, body, ...auth });
    const b = behaviour;
    if (b.failWith && b.failWith.times > 0) {
      b.failWith.times--;
      return fail(res, b.failWith.status, b.failWith.type, b.failWith.message);
    }
    if (PROFILE_ONLY.test(modelId)) {
      return fail(
        res,
        400,
        'ValidationException',
        `Invocation of model ID ${modelId} with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model.`,
      );
    }
    const claude = modelId.replace(PROFILE_PREFIX, '').startsWith('anthropic.claude');
    if (operation.startsWith('invoke')) {
      if (!claude)
        return fail(res, 400, 'ValidationException', 'Malformed input request: required key [inputText] not found');
      const problem = invalidClaudeBody(body);
      if (problem) return fail(res, 400, 'ValidationException', problem);
      return operation === 'invoke' ? invoke(b, res, body, modelId) : invokeStream(b, res, body, modelId);
    }
    const problem = invalidConverseBody(body);
    if (problem) return fail(res, 400, 'ValidationException', problem);
    return operation === 'converse' ? converse(b, res, body) : converseStream(b, res, body);
  });
  return {
    ...server,
    requests,
    credentials,
    apiKey,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: BedrockBehaviour) {
      behaviour = value;
    },
  };
}

type Auth = { auth: 'sigv4'; region: string } | { auth: 'api-key' } | { refusal: { type: string; message: string } };

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** What AWS checks of a request's credentials: the key, the scope, the clock, and the signature recomputed. */
async function authenticate(
  req: IncomingMessage,
  url: URL,
  raw: Buffer,
  credentials: { accessKeyId: string; secretAccessKey: string },
  apiKey: string,
): Promise<Auth> {
  const header = req.headers.authorization ?? '';
  if (header === '')
    return { refusal: { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' } };
  if (header.startsWith('Bearer ')) {
    if (header.slice(7) === apiKey) return { auth: 'api-key' };
    return {
      refusal: {
        type: 'UnrecognizedClientException',
        message: 'Invalid API Key format: Must start with pre-defined prefix',
      },
    };
  }
  const match = AUTHORIZATION.exec(header);
  if (!match) {
    return {
      refusal: {
        type: 'IncompleteSignatureException',
        message: `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters. Authorization=${header}`,
      },
    };
  }
  const [, accessKeyId, shortDate, region, service, signedHeaders, signature] = match as unknown as string[];
  if (accessKeyId !== credentials.accessKeyId) {
    return {
      refusal: {
        type: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      },
    };
  }
  if (service !== 'bedrock') {
    return {
      refusal: {
        type: 'InvalidSignatureException',
        message: `Credential should be scoped to correct service: 'bedrock'.`,
      },
    };
  }
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  const signingDate = stamp
    ? new Date(`${stamp[1]}-${stamp[2]}-${stamp[3]}T${stamp[4]}:${stamp[5]}:${stamp[6]}Z`)
    : undefined;
  if (!signingDate || amzDate.slice(0, 8) !== shortDate) {
    return { refusal: { type: 'IncompleteSignatureException', message: "Date must be in ISO-8601 'basic format'." } };
  }
  if (Math.abs(Date.now() - signingDate.getTime()) > 5 * 60_000) {
    return {
      refusal: {
        type: 'InvalidSignatureException',
        message: `Signature expired: ${amzDate} is now earlier than the allowed window.`,
      },
    };
  }
  const headers: Record<string, string> = {};
  for (const name of (signedHeaders as string).split(';')) {
    const value = req.headers[name];
    if (value === undefined) return { refusal: { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH } };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string[]> = {};
  for (const name of new Set(url.searchParams.keys())) query[name] = url.searchParams.getAll(name);
  const signer = new SignatureV4({
    service: 'bedrock',
    region: region as string,
    credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  const request = {
    method: req.method ?? 'POST',
    protocol: 'http:',
    hostname: String(req.headers.host ?? ''),
    path: url.pathname,
    query,
    headers,
    body: raw,
  } as unknown as HttpRequest;
  const expected = (await signer.sign(request, { signingDate })).headers.authorization ?? '';
  if (!expected.endsWith(`Signature=${signature}`)) {
    return { refusal: { type: 'InvalidSignatureException', message: SIGNATURE_MISMATCH } };
  }
  return { auth: 'sigv4', region: region as string };
}

/** A few of Bedrock's foundation models, as ListFoundationModels describes them. */
export const FOUNDATION_MODELS = [
  summary(
    'anthropic',
    'anthropic.claude-3-5-sonnet-20241022-v2:0',
    'Claude 3.5 Sonnet v2',
    ['TEXT', 'IMAGE'],
    ['TEXT'],
    ['ON_DEMAND', 'INFERENCE_PROFILE'],
  ),
  summary(
    'anthropic',
    'anthropic.claude-sonnet-4-20250514-v1:0',
    'Claude Sonnet 4',
    ['TEXT', 'IMAGE'],
    ['TEXT'],
    ['INFERENCE_PROFILE'],
  ),
  summary(
    'amazon',
    'amazon.nova-pro-v1:0',
    'Nova Pro',
    ['TEXT', 'IMAGE', 'VIDEO'],
    ['TEXT'],
    ['ON_DEMAND', 'INFERENCE_PROFILE'],
  ),
  summary('amazon', 'amazon.titan-embed-text-v2:0', 'Titan Text Embeddings V2', ['TEXT'], ['EMBEDDING'], ['ON_DEMAND']),
  summary('amazon', 'amazon.nova-canvas-v1:0', 'Nova Canvas', ['TEXT', 'IMAGE'], ['IMAGE'], ['ON_DEMAND']),
  summary(
    'meta',
    'meta.llama3-1-70b-instruct-v1:0:128k',
    'Llama 3.1 70B Instruct',
    ['TEXT'],
    ['TEXT'],
    ['PROVISIONED'],
  ),
  summary('meta', 'meta.llama3-1-70b-instruct-v1:0', 'Llama 3.1 70B Instruct', ['TEXT'], ['TEXT'], ['ON_DEMAND']),
];

function summary(
  provider: string,
  modelId: string,
  modelName: string,
  inputModalities: string[],
  outputModalities: string[],
  inferenceTypesSupported: string[],
) {
  return {
    modelArn: `arn:aws:bedrock:us-east-1::foundation-model/${modelId}`,
    modelId,
    modelName,
    providerName: provider[0]!.toUpperCase() + provider.slice(1),
    inputModalities,
    outputModalities,
    responseStreamingSupported: outputModalities.includes('TEXT'),
    customizationsSupported: [],
    inferenceTypesSupported,
    modelLifecycle: { status: 'ACTIVE' },
  };
}

/** ListFoundationModels: the catalogue, narrowed by the filters AWS takes (an unknown value is a 400). */
function listFoundationModels(url: URL, res: ServerResponse) {
  const modality = url.searchParams.get('byOutputModality');
  if (modality !== null && !['TEXT', 'IMAGE', 'EMBEDDING'].includes(modality)) {
    return fail(
      res,
      400,
      'ValidationException',
      `1 validation error detected: Value '${modality}' at 'byOutputModality' failed to satisfy constraint: Member must satisfy enum value set: [TEXT, IMAGE, EMBEDDING]`,
    );
  }
  const provider = url.searchParams.get('byProvider')?.toLowerCase();
  const inference = url.searchParams.get('byInferenceType');
  const modelSummaries = FOUNDATION_MODELS.filter(
    (model) =>
      (modality === null || model.outputModalities.includes(modality)) &&
      (provider === undefined || model.providerName.toLowerCase() === provider) &&
      (inference === null || model.inferenceTypesSupported.includes(inference)),
  );
  res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'mock-request-id' });
  res.end(JSON.stringify({ modelSummaries }));
}

function fail(res: ServerResponse, status: number, type: string, message: string) {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-requestid': 'mock-request-id',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  res.end(JSON.stringify({ message }));
}

/** What InvokeModel checks of an Anthropic body: Bedrock's version, no keys the API does not take. */
function invalidClaudeBody(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'Malformed input request: expected type: JSONObject';
  for (const key of ['model', 'stream']) {
    if (key in body)
      return `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`;
  }
  // Bedrock's own bedrock-2023-05-31; Anthropic's Bedrock SDK sends its Messages API version, which Bedrock takes too.
  if (typeof body.anthropic_version !== 'string' || !/^(bedrock-)?\d{4}-\d{2}-\d{2}$/.test(body.anthropic_version))
    return 'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.';
  if (typeof body.max_tokens !== 'number') return 'Malformed input request: #: required key [max_tokens] not found';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return 'Malformed input request: #: required key [messages] not found';
  if (body.thinking?.type === 'enabled' && !(body.thinking.budget_tokens < body.max_tokens))
    return '`max_tokens` must be greater than `thinking.budget_tokens`';
  return undefined;
}

/** What Converse checks: known top-level fields, user first, roles alternating, content as blocks. */
function invalidConverseBody(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'Malformed input request';
  const unknown = Object.keys(body).find((key) => !CONVERSE_FIELDS.has(key));
  if (unknown) return `Malformed input request: extraneous key [${unknown}] is not permitted`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'The messages field is required';
  for (const [i, message] of body.messages.entries()) {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    if (message?.role !== role)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    if (!Array.isArray(message.content) || message.content.length === 0)
      return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    if (message.content.some((block: any) => typeof block?.text === 'string' && block.text.trim() === ''))
      return 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.';
  }
  const toolBlocks = body.messages.some((message: any) =>
    message.content.some((block: any) => block?.toolUse || block?.toolResult),
  );
  if (toolBlocks && !body.toolConfig)
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  return undefined;
}

/** Tools offered and the last user turn is not already a tool result. */
function callsTool(tools: unknown[] | undefined, lastContent: unknown): boolean {
  if (!Array.isArray(tools) || tools.length === 0) return false;
  const blocks = Array.isArray(lastContent) ? lastContent : [];
  return !blocks.some((block: any) => block?.type === 'tool_result' || block?.toolResult);
}

function claudeAnswer(b: BedrockBehaviour, body: any) {
  const reply = b.reply ?? 'Hello from Bedrock.';
  const thinking = body.thinking?.type === 'enabled' ? (b.thinking ?? 'Let me think.') : undefined;
  const tool = callsTool(body.tools, body.messages.at(-1)?.content) ? body.tools[0] : undefined;
  const usage = b.claudeUsage ?? {
    input_tokens: tokens(JSON.stringify(body.messages)),
    output_tokens: tokens(reply + (thinking ?? '')),
  };
  return { reply, thinking, tool, usage };
}

function invoke(b: BedrockBehaviour, res: ServerResponse, body: any, modelId: string) {
  const { reply, thinking, tool, usage } = claudeAnswer(b, body);
  const content: any[] = [];
  if (thinking) content.push({ type: 'thinking', thinking, signature: 'sig-mock' });
  if (tool)
    content.push({ type: 'tool_use', id: 'toolu_bdrk_01', name: tool.name, input: b.toolInput ?? { city: 'Paris' } });
  else content.push({ type: 'text', text: reply });
  res.writeHead(200, {
    'content-type': 'application/json',
    'x-amzn-requestid': 'mock-request-id',
    'x-amzn-bedrock-invocation-latency': '321',
    'x-amzn-bedrock-input-token-count': String(usage.input_tokens),
    'x-amzn-bedrock-output-token-count': String(usage.output_tokens),
  });
  res.end(
    JSON.stringify({
      id: 'msg_bdrk_01MockBedrock',
      type: 'message',
      role: 'assistant',
      model: modelId
        .replace(PROFILE_PREFIX, '')
        .replace(/^anthropic\./, '')
        .replace(/-v\d+:\d+$/, ''),
      content,
      stop_reason: tool ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
    }),
  );
}

/** One event-stream message, written in two pieces split inside the prelude (as a network may deliver it). */
function sendEvent(res: ServerResponse, headers: MessageHeaders, payload: unknown) {
  const frame = codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) });
  res.write(frame.subarray(0, 7));
  res.write(frame.subarray(7));
}

const eventHeaders = (type: string): MessageHeaders => ({
  ':event-type': { type: 'string', value: type },
  ':content-type': { type: 'string', value: 'application/json' },
  ':message-type': { type: 'string', value: 'event' },
});

function sendException(res: ServerResponse, exception: { type: string; message: string }) {
  sendEvent(
    res,
    {
      ':exception-type': { type: 'string', value: exception.type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    { message: exception.message },
  );
  res.end();
}

function startStream(res: ServerResponse) {
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-bedrock-content-type': 'application/json',
    'x-amzn-requestid': 'mock-request-id',
  });
}

function invokeStream(b: BedrockBehaviour, res: ServerResponse, body: any, modelId: string) {
  const { reply, thinking, tool, usage } = claudeAnswer(b, body);
  startStream(res);
  let pad = 0;
  const chunk = (event: Record<string, unknown>) =>
    sendEvent(res, eventHeaders('chunk'), {
      bytes: Buffer.from(JSON.stringify(event)).toString('base64'),
      p: padding.slice(0, 1 + (pad++ % padding.length)),
    });
  chunk({
    type: 'message_start',
    message: {
      id: 'msg_bdrk_01MockBedrock',
      type: 'message',
      role: 'assistant',
      model: modelId
        .replace(PROFILE_PREFIX, '')
        .replace(/^anthropic\./, '')
        .replace(/-v\d+:\d+$/, ''),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  let index = 0;
  if (thinking) {
    chunk({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    chunk({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
    chunk({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig-mock' } });
    chunk({ type: 'content_block_stop', index: index++ });
  }
  if (tool) {
    const input = JSON.stringify(b.toolInput ?? { city: 'Paris' });
    chunk({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: 'toolu_bdrk_01', name: tool.name, input: {} },
    });
    chunk({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input.slice(0, 5) } });
    chunk({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input.slice(5) } });
  } else {
    const words = reply.split(/(?<= )/);
    chunk({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const [i, word] of words.entries()) {
      chunk({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: word } });
      if (i === 0 && b.streamException) return sendException(res, b.streamException);
    }
  }
  chunk({ type: 'content_block_stop', index });
  chunk({
    type: 'message_delta',
    delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  chunk({
    type: 'message_stop',
    'amazon-bedrock-invocationMetrics': {
      inputTokenCount: usage.input_tokens,
      outputTokenCount: usage.output_tokens,
      invocationLatency: 321,
      firstByteLatency: 123,
    },
  });
  res.end();
}

function converseAnswer(b: BedrockBehaviour, body: any) {
  const reply = b.reply ?? 'Hello from Bedrock.';
  const tool = callsTool(body.toolConfig?.tools, body.messages.at(-1)?.content)
    ? body.toolConfig.tools[0].toolSpec
    : undefined;
  const usage = b.converseUsage ?? { inputTokens: tokens(JSON.stringify(body.messages)), outputTokens: tokens(reply) };
  const total = usage.inputTokens + usage.outputTokens + (usage.cacheReadInputTokens ?? 0);
  return { reply, tool, usage: { ...usage, totalTokens: total } };
}

function converse(b: BedrockBehaviour, res: ServerResponse, body: any) {
  const { reply, tool, usage } = converseAnswer(b, body);
  const content = tool
    ? [{ toolUse: { toolUseId: 'tooluse_mock01', name: tool.name, input: b.toolInput ?? { city: 'Paris' } } }]
    : [{ text: reply }];
  res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'mock-request-id' });
  res.end(
    JSON.stringify({
      output: { message: { role: 'assistant', content } },
      stopReason: tool ? 'tool_use' : 'end_turn',
      usage,
      metrics: { latencyMs: 321 },
    }),
  );
}

function converseStream(b: BedrockBehaviour, res: ServerResponse, body: any) {
  const { reply, tool, usage } = converseAnswer(b, body);
  startStream(res);
  const event = (type: string, payload: Record<string, unknown>) =>
    sendEvent(res, eventHeaders(type), { ...payload, p: padding.slice(0, 7) });
  event('messageStart', { role: 'assistant' });
  if (tool) {
    const input = JSON.stringify(b.toolInput ?? { city: 'Paris' });
    event('contentBlockStart', {
      contentBlockIndex: 0,
      start: { toolUse: { toolUseId: 'tooluse_mock01', name: tool.name } },
    });
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: input.slice(0, 4) } } });
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: input.slice(4) } } });
  } else {
    for (const [i, word] of reply.split(/(?<= )/).entries()) {
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: word } });
      if (i === 0 && b.streamException) return sendException(res, b.streamException);
    }
  }
  event('contentBlockStop', { contentBlockIndex: 0 });
  event('messageStop', { stopReason: tool ? 'tool_use' : 'end_turn' });
  event('metadata', { usage, metrics: { latencyMs: 321 } });
  res.end();
}

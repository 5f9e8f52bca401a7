import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Tencent Cloud endpoint for Hunyuan's ChatCompletions (API 2023-09-01). Like the real one
 * it checks the action, version and timestamp headers and recomputes the TC3-HMAC-SHA256 signature
 * (its own implementation, kept apart from the gateway's signer) with the secret of the SecretId the
 * credential names; every refusal is HTTP 200 with `Response.Error`, as Tencent answers. Answers are
 * whole JSON or `text/event-stream` events, each repeating the usage so far.
 */
export interface RecordedTencentRequest {
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MockTencentBehaviour {
  reply?: string;
  usage?: { PromptTokens: number; CompletionTokens: number };
  /** Arguments of the tool call made when tools are offered. */
  toolArgs?: Record<string, unknown>;
}

export interface MockTencent {
  url: string;
  requests: RecordedTencentRequest[];
  behaviour: MockTencentBehaviour;
  /** SecretId → SecretKey the endpoint accepts. */
  credentials: Map<string, string>;
  close(): Promise<void>;
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();

function expectedSignature(req: IncomingMessage, raw: Buffer, secretKey: string, date: string, signed: string[]) {
  const url = new URL(req.url ?? '/', 'http://mock');
  const headers = signed
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .toLowerCase()}\n`,
    )
    .join('');
  const canonical = [req.method, url.pathname, url.search.slice(1), headers, signed.join(';'), sha256(raw)].join('\n');
  const scope = `${date}/hunyuan/tc3_request`;
  const toSign = ['TC3-HMAC-SHA256', String(req.headers['x-tc-timestamp']), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(`TC3${secretKey}`, date), 'hunyuan'), 'tc3_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

/** The refusal Tencent would send, or undefined when the request is signed right. */
function authError(req: IncomingMessage, raw: Buffer, credentials: Map<string, string>) {
  const auth = String(req.headers.authorization ?? '');
  const match =
    /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/([^/]+)\/tc3_request, SignedHeaders=([a-z;-]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!match) return ['AuthFailure.InvalidAuthorization', 'Authorization is invalid.'];
  const [, secretId = '', date = '', service, signedHeaders = '', signature] = match;
  const timestamp = Number(req.headers['x-tc-timestamp']);
  if (!Number.isInteger(timestamp))
    return ['MissingParameter', 'The request is missing a required parameter `Timestamp`.'];
  if (Math.abs(Date.now() / 1000 - timestamp) > 300) {
    return [
      'AuthFailure.SignatureExpire',
      'Signature expired. Timestamp and server time cannot differ by more than 5 minutes.',
    ];
  }
  const secretKey = credentials.get(secretId);
  if (secretKey === undefined)
    return ['AuthFailure.SecretIdNotFound', 'The SecretId is not found, please ensure that your SecretId is correct.'];
  const signed = signedHeaders.split(';');
  if (service !== 'hunyuan' || !signed.includes('host') || !signed.includes('content-type')) {
    return [
      'AuthFailure.SignatureFailure',
      'The provided credentials could not be validated. Please check your signature is correct.',
    ];
  }
  if (expectedSignature(req, raw, secretKey, date, signed) !== signature) {
    return [
      'AuthFailure.SignatureFailure',
      'The provided credentials could not be validated. Please check your signature is correct.',
    ];
  }
  return undefined;
}

export async function startMockTencent(credentials: Record<string, string> = {}): Promise<MockTencent> {
  const requests: RecordedTencentRequest[] = [];
  const mock = { behaviour: {} as MockTencentBehaviour, credentials: new Map(Object.entries(credentials)) };
  const server = await serveMock(async (req, res, raw) => {
    const requestId = randomUUID();
    const fail = (code: string, message: string) =>
      json(res, { Response: { Error: { Code: code, Message: message }, RequestId: requestId } });
    if (req.method !== 'POST') return fail('UnsupportedOperation', 'only POST is served');
    const refusal = authError(req, raw, mock.credentials);
    if (refusal) return fail(refusal[0]!, refusal[1]!);
    if (req.headers['x-tc-action'] !== 'ChatCompletions') {
      return fail('InvalidAction', `The action \`${String(req.headers['x-tc-action'])}\` is not supported.`);
    }
    if (req.headers['x-tc-version'] !== '2023-09-01') return fail('NoSuchVersion', 'The API version does not exist.');
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail('InvalidParameter', 'The request body is not valid JSON.');
    }
    requests.push({ headers: req.headers, body });
    if (typeof body.Model !== 'string' || !Array.isArray(body.Messages) || body.Messages.length === 0) {
      return fail('InvalidParameter', 'Model and Messages are required.');
    }
    for (const message of body.Messages) {
      if (!['system', 'user', 'assistant', 'tool'].includes(message?.Role)) {
        return fail('InvalidParameterValue.Role', `unknown Role ${String(message?.Role)}`);
      }
    }
    const reply = mock.behaviour.reply ?? 'Hello from the Hunyuan mock.';
    const usage = mock.behaviour.usage ?? { PromptTokens: 12, CompletionTokens: 7 };
    const total = { ...usage, TotalTokens: usage.PromptTokens + usage.CompletionTokens };
    const id = randomUUID().replaceAll('-', '');
    const created = Math.floor(Date.now() / 1000);
    const tool = Array.isArray(body.Tools) && body.Tools.length > 0 ? body.Tools[0] : undefined;
    if (tool && typeof tool.Function?.Parameters !== 'string') {
      return fail('InvalidParameter', 'Tools.Function.Parameters must be a JSON string.');
    }
    const toolCall = tool && {
      Id: `call_${id.slice(0, 12)}`,
      Type: 'function',
      Index: 0,
      Function: { Name: tool.Function.Name, Arguments: JSON.stringify(mock.behaviour.toolArgs ?? { city: 'Paris' }) },
    };
    if (body.Stream !== true) {
      const message = toolCall
        ? { Role: 'assistant', Content: '', ToolCalls: [toolCall] }
        : { Role: 'assistant', Content: reply };
      return json(res, {
        Response: {
          Id: id,
          Created: created,
          Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
          Choices: [{ Index: 0, Message: message, FinishReason: toolCall ? 'tool_calls' : 'stop' }],
          Usage: total,
          RequestId: requestId,
        },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-tc-requestid': requestId });
    const pieces = toolCall ? [] : [reply.slice(0, 5), reply.slice(5)];
    const event = (choice: Record<string, unknown>, completion: number) =>
      `data: ${JSON.stringify({
        Note: '以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记',
        Choices: [{ Index: 0, ...choice }],
        Created: created,
        Id: id,
        Usage: {
          PromptTokens: usage.PromptTokens,
          CompletionTokens: completion,
          TotalTokens: usage.PromptTokens + completion,
        },
      })}\n\n`;
    pieces.forEach((piece, i) => {
      res.write(event({ Delta: { Role: 'assistant', Content: piece }, FinishReason: '' }, i + 1));
    });
    if (toolCall)
      res.write(event({ Delta: { Role: 'assistant', Content: '', ToolCalls: [toolCall] }, FinishReason: '' }, 1));
    res.end(
      event(
        { Delta: { Role: 'assistant', Content: '' }, FinishReason: toolCall ? 'tool_calls' : 'stop' },
        usage.CompletionTokens,
      ),
    );
  });
  return {
    url: server.url,
    close: server.close,
    requests,
    credentials: mock.credentials,
    get behaviour() {
      return mock.behaviour;
    },
    set behaviour(value: MockTencentBehaviour) {
      mock.behaviour = value;
    },
  };
}

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

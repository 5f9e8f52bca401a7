import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local Zhipu v3 model-api: `POST /api/paas/v3/model-api/{model}/invoke | sse-invoke` with the raw
 * JWT in `Authorization`. The token is verified as Zhipu does: header `{alg: HS256, sign_type: SIGN}`,
 * payload `{api_key, exp, timestamp}` (milliseconds), HMAC-SHA256 recomputed with the secret of the
 * key id, not expired; refusals in v3's envelope `{code, msg, success: false}`. Answers are
 * `{code: 200, msg, success, data: {choices: [{role, content}], usage}}` (content a quoted string, as
 * v3 sent it) or an SSE stream of `add` events with raw text `data:` lines and a `finish` event with
 * `meta:` usage.
 */
export interface RecordedZhipuRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The verified token's payload. */
  claims?: { api_key: string; exp: number; timestamp: number };
}

export interface ZhipuBehaviour {
  reply?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface MockZhipu {
  url: string;
  requests: RecordedZhipuRequest[];
  behaviour: ZhipuBehaviour;
  close(): Promise<void>;
}

const MODELS = new Set(['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite']);
const PATH = /^\/api\/paas\/v3\/model-api\/([^/]+)\/(invoke|sse-invoke)$/;
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startMockZhipu(secrets: Record<string, string>): Promise<MockZhipu> {
  const requests: RecordedZhipuRequest[] = [];
  let behaviour: ZhipuBehaviour = {};
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let body: any;
    try {
      body = JSON.parse(raw.toString());
    } catch {
      body = undefined;
    }
    const recorded: RecordedZhipuRequest = { path, headers: req.headers, body };
    requests.push(recorded);
    const verified = verify(String(req.headers.authorization ?? ''), secrets);
    if ('code' in verified) return envelope(res, verified.code, verified.msg);
    recorded.claims = verified;
    const match = PATH.exec(path);
    if (!match || req.method !== 'POST') return envelope(res, 1211, '模型不存在，请检查模型代码');
    const model = decodeURIComponent(match[1] ?? '');
    if (!MODELS.has(model)) return envelope(res, 1211, '模型不存在，请检查模型代码');
    const prompt = body?.prompt;
    if (
      !Array.isArray(prompt) ||
      prompt.length === 0 ||
      prompt.some((m: any) => !['user', 'assistant'].includes(m?.role))
    ) {
      return envelope(res, 1214, 'prompt 参数非法');
    }
    return match[2] === 'invoke' ? invoke(behaviour, res, prompt) : sseInvoke(behaviour, res, prompt);
  });
  return {
    ...server,
    requests,
    get behaviour() {
      return behaviour;
    },
    set behaviour(value: ZhipuBehaviour) {
      behaviour = value;
    },
  };
}

/** v3 reports failures with HTTP 200 and `success: false`. */
function envelope(res: ServerResponse, code: number, msg: string) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, msg, success: false }));
}

function verify(token: string, secrets: Record<string, string>) {
  if (!token) return { code: 1001, msg: 'Header中未收到Authorization参数，无法进行身份验证。' };
  const [header, payload, signature, extra] = token.split('.');
  const invalid = { code: 1002, msg: 'Authorization Token非法，请确认Authorization Token正确传递。' };
  if (!header || !payload || !signature || extra !== undefined) return invalid;
  let head: any;
  let claims: any;
  try {
    head = JSON.parse(Buffer.from(header, 'base64url').toString());
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  } catch {
    return invalid;
  }
  if (head.alg !== 'HS256' || head.sign_type !== 'SIGN') return invalid;
  const secret = secrets[claims.api_key];
  if (secret === undefined) return { code: 1000, msg: '身份验证失败。' };
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { code: 1004, msg: '提供的Authorization Token验证失败。' };
  }
  if (typeof claims.exp !== 'number' || claims.exp <= Date.now() || typeof claims.timestamp !== 'number') {
    return { code: 1003, msg: 'Authorization Token已过期。' };
  }
  return claims as { api_key: string; exp: number; timestamp: number };
}

function usageFor(b: ZhipuBehaviour, prompt: unknown, reply: string) {
  const prompt_tokens = b.usage?.prompt_tokens ?? tokens(JSON.stringify(prompt));
  const completion_tokens = b.usage?.completion_tokens ?? tokens(reply);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function invoke(b: ZhipuBehaviour, res: ServerResponse, prompt: unknown) {
  const reply = b.reply ?? 'Hello from ChatGLM.';
  const taskId = randomBytes(8).toString('hex');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      code: 200,
      msg: '操作成功',
      data: {
        request_id: `req-${taskId}`,
        task_id: taskId,
        task_status: 'SUCCESS',
        choices: [{ role: 'assistant', content: JSON.stringify(reply) }],
        usage: usageFor(b, prompt, reply),
      },
      success: true,
    }),
  );
}

function sseInvoke(b: ZhipuBehaviour, res: ServerResponse, prompt: unknown) {
  const reply = b.reply ?? 'Hello from ChatGLM.';
  const taskId = randomBytes(8).toString('hex');
  res.writeHead(200, { 'content-type': 'text/event-stream;charset=UTF-8' });
  for (const piece of reply.match(/.{1,5}/gs) ?? []) {
    // Raw text: one data line per line of the piece, nothing stripped.
    const data = piece
      .split('\n')
      .map((line) => `data:${line}`)
      .join('\n');
    res.write(`event:add\nid:${taskId}\n${data}\n\n`);
  }
  const meta = {
    task_status: 'SUCCESS',
    usage: usageFor(b, prompt, reply),
    task_id: taskId,
    request_id: `req-${taskId}`,
  };
  res.write(`event:finish\nid:${taskId}\ndata:\nmeta:${JSON.stringify(meta)}\n\n`);
  res.end();
}

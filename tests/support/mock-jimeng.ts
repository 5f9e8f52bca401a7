import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * Volcengine's visual API as Jimeng channels speak it. Every call is checked the way the gateway of
 * Volcengine's OpenAPI checks it (verifyVolcSignature): an `HMAC-SHA256 Credential=AK/day/cn-north-1/cv/request,
 * SignedHeaders=…, Signature=…` Authorization over the canonical request (method, path, sorted escaped
 * query, the signed headers, the body's SHA-256 which must equal X-Content-Sha256), host and x-date signed,
 * X-Date within 15 minutes; otherwise 401 with `ResponseMetadata.Error`. `POST /?Action=CVSync2AsyncSubmitTask&Version=2022-08-31`
 * needs a known req_key and a prompt, takes frames 121/241 and the documented aspect ratios, and answers
 * `{code: 10000, data: {task_id}}`; `CVSync2AsyncGetResult` with the same req_key advances the task one
 * state per query: in_queue → generating → done with a video_url this mock serves, or code 50413 when
 * created while `failNext` is set; an unknown task id is `not_found`.
 */
export interface JimengTask {
  id: string;
  reqKey: string;
  status: 'in_queue' | 'generating' | 'done';
  body: Record<string, unknown>;
  fails: boolean;
}

export interface MockJimeng {
  url: string;
  accessKey: string;
  secretKey: string;
  /** The channel key: `AccessKeyID|SecretAccessKey`. */
  key: string;
  tasks: Map<string, JimengTask>;
  requests: Array<{ action: string; headers: IncomingHttpHeaders; body: any }>;
  content: Buffer;
  behaviour: { failNext: boolean };
  close(): Promise<void>;
}

const REQ_KEYS = ['jimeng_vgfm_t2v_l20', 'jimeng_vgfm_i2v_l20', 'jimeng_t2v_v30', 'jimeng_i2v_first_v30'];
const ASPECT_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
const SKEW_MS = 15 * 60_000;

export interface SignatureFailure {
  code: string;
  codeN: number;
  message: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Checks a request's Volcengine signature against the secrets of known access keys, as the service
 * recomputes it from what it received; undefined when it holds.
 */
export function verifyVolcSignature(input: {
  method: string;
  /** The request target: path and raw query. */
  target: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  secrets: ReadonlyMap<string, string>;
  region: string;
  service: string;
  now: number;
}): SignatureFailure | undefined {
  const header = (name: string) => {
    const value = input.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  const auth =
    /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      header('authorization') ?? '',
    );
  if (!auth)
    return { code: 'MissingAuthenticationToken', codeN: 100001, message: 'the request carries no valid Authorization' };
  const [, accessKey, day, region, service, signedList, signature] = auth as unknown as string[];
  const secret = input.secrets.get(accessKey!);
  if (secret === undefined)
    return { code: 'InvalidAccessKey', codeN: 100009, message: `access key ${accessKey} is invalid` };
  const xDate = header('x-date') ?? '';
  const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(xDate);
  if (!stamp) return { code: 'InvalidTimestamp', codeN: 100014, message: 'X-Date is missing or malformed' };
  const at = Date.UTC(+stamp[1]!, +stamp[2]! - 1, +stamp[3]!, +stamp[4]!, +stamp[5]!, +stamp[6]!);
  if (Math.abs(input.now - at) > SKEW_MS)
    return { code: 'InvalidTimestamp', codeN: 100014, message: 'X-Date is out of range' };
  if (day !== xDate.slice(0, 8) || region !== input.region || service !== input.service) {
    return { code: 'InvalidCredential', codeN: 100010, message: 'the credential scope does not match the request' };
  }
  const signed = signedList!.split(';');
  if (!signed.includes('host') || !signed.includes('x-date')) {
    return { code: 'SignatureDoesNotMatch', codeN: 100010, message: 'host and x-date must be signed' };
  }
  const bodyHash = sha256(input.body);
  const claimed = header('x-content-sha256');
  if (claimed !== undefined && claimed !== bodyHash) {
    return { code: 'SignatureDoesNotMatch', codeN: 100010, message: 'X-Content-Sha256 is not the hash of the body' };
  }
  const [path = '/', rawQuery = ''] = input.target.split('?');
  const query = [...new URLSearchParams(rawQuery)]
    .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
    .sort()
    .join('&');
  const lines: string[] = [];
  for (const name of signed) {
    const value = header(name);
    if (value === undefined)
      return { code: 'SignatureDoesNotMatch', codeN: 100010, message: `signed header ${name} is missing` };
    lines.push(`${name}:${value.replace(/\s+/g, ' ').trim()}`);
  }
  const canonical = [input.method, path, query, `${lines.join('\n')}\n`, signedList, bodyHash].join('\n');
  const toSign = `HMAC-SHA256\n${xDate}\n${day}/${region}/${service}/request\n${sha256(canonical)}`;
  const key = hmac(hmac(hmac(hmac(secret, day!), region!), service!), 'request');
  const expected = createHmac('sha256', key).update(toSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, 'hex'))) {
    return {
      code: 'SignatureDoesNotMatch',
      codeN: 100010,
      message: 'The request signature we calculated does not match the signature you provided.',
    };
  }
  return undefined;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startMockJimeng(
  accessKey = 'AKLTmockAccessKey',
  secretKey = 'bW9ja1NlY3JldEtleQ==',
): Promise<MockJimeng> {
  const mock: MockJimeng = {
    url: '',
    accessKey,
    secretKey,
    key: `${accessKey}|${secretKey}`,
    tasks: new Map(),
    requests: [],
    content: Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), randomBytes(40)]),
    behaviour: { failNext: false },
    close: async () => {},
  };
  const secrets = new Map([[accessKey, secretKey]]);
  const result = (res: ServerResponse, code: number, message: string, data: unknown, status = 200) =>
    json(res, status, {
      code,
      message,
      request_id: randomBytes(8).toString('hex'),
      status: code,
      time_elapsed: '1ms',
      data,
    });

  const server = await serveMock(async (req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://mock');
    const video = /^\/videos\/([^/]+)\.mp4$/.exec(url.pathname);
    if (req.method === 'GET' && video) {
      if (mock.tasks.get(video[1]!)?.status !== 'done') return json(res, 404, { message: 'no such video' });
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(mock.content);
    }
    const action = url.searchParams.get('Action') ?? '';
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    mock.requests.push({ action, headers: req.headers, body });
    const failure = verifyVolcSignature({
      method: req.method ?? '',
      target: req.url ?? '/',
      headers: req.headers,
      body: raw,
      secrets,
      region: 'cn-north-1',
      service: 'cv',
      now: Date.now(),
    });
    if (failure) {
      return json(res, 401, {
        ResponseMetadata: {
          RequestId: randomBytes(8).toString('hex'),
          Action: action,
          Version: url.searchParams.get('Version') ?? '',
          Service: 'cv',
          Region: 'cn-north-1',
          Error: { CodeN: failure.codeN, Code: failure.code, Message: failure.message },
        },
      });
    }
    if (url.pathname !== '/' || url.searchParams.get('Version') !== '2022-08-31') {
      return json(res, 404, {
        ResponseMetadata: { Error: { Code: 'InvalidActionOrVersion', Message: 'unknown action or version' } },
      });
    }
    if (typeof body !== 'object' || body === null) return result(res, 50400, 'Invalid Request Body', null, 400);
    if (!REQ_KEYS.includes(body.req_key)) return result(res, 50400, `Invalid req_key ${body.req_key}`, null, 400);
    if (action === 'CVSync2AsyncSubmitTask') {
      if (typeof body.prompt !== 'string' || body.prompt === '')
        return result(res, 50400, 'prompt is required', null, 400);
      if (body.frames !== undefined && ![121, 241].includes(body.frames))
        return result(res, 50400, 'Invalid frames', null, 400);
      if (body.aspect_ratio !== undefined && !ASPECT_RATIOS.includes(body.aspect_ratio)) {
        return result(res, 50400, 'Invalid aspect_ratio', null, 400);
      }
      const task: JimengTask = {
        id: String(7_000_000_000_000_000_000n + BigInt(mock.tasks.size)),
        reqKey: body.req_key,
        status: 'in_queue',
        body,
        fails: mock.behaviour.failNext,
      };
      mock.behaviour.failNext = false;
      mock.tasks.set(task.id, task);
      return result(res, 10000, 'Success', { task_id: task.id });
    }
    if (action === 'CVSync2AsyncGetResult') {
      const task = mock.tasks.get(String(body.task_id));
      if (!task || task.reqKey !== body.req_key)
        return result(res, 10000, 'Success', { status: 'not_found', video_url: '' });
      if (task.status === 'in_queue') task.status = 'generating';
      else if (task.status === 'generating' && task.fails) return result(res, 50413, 'Post Text Risk Not Pass', null);
      else if (task.status === 'generating') task.status = 'done';
      return result(res, 10000, 'Success', {
        status: task.status,
        video_url: task.status === 'done' ? `${mock.url}/videos/${task.id}.mp4` : '',
        resp_data: '',
      });
    }
    return json(res, 404, {
      ResponseMetadata: { Error: { Code: 'InvalidActionOrVersion', Message: `unknown action ${action}` } },
    });
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

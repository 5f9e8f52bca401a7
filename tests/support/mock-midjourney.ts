import { randomInt } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A midjourney-proxy server (novicezk/midjourney-proxy and its -plus fork): every `/mj/…` route (also
 * under the `/mj-fast`, `/mj-relax` mode prefixes) checks `mj-api-secret` (401 otherwise). Given several
 * secrets it is several accounts, as a multi-key channel's keys are: each secret's fetches, lists,
 * image seeds and actions see only the tasks submitted with it. Submissions
 * answer `{code, description, result, properties}` with the code the test asks for (1 submitted, 21
 * exists, 22 queued, 23 queue full, 24 banned prompt). A task advances one state each time it is
 * listed: NOT_START → SUBMITTED → IN_PROGRESS (50%) → SUCCESS (100%, imageUrl and U1..U4/V1..V4/reroll
 * buttons), or FAILURE with failReason when created while `failNext` is set; a `stuck` one stays
 * IN_PROGRESS. `POST /mj/submit/action` needs a customId of one of its task's buttons; an upload answers the
 * uploaded images' URLs as its result.
 * list-by-condition calls are counted, with the most ever in flight at once (they take 30 ms).
 */
export interface RecordedMjRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface MjTask {
  id: string;
  action: string;
  prompt: string;
  status: string;
  progress: string;
  imageUrl: string;
  failReason: string;
  buttons: Array<{ customId: string; label: string; emoji: string; type: number; style: number }>;
  submitTime: number;
  startTime: number;
  finishTime: number;
  properties: Record<string, unknown>;
  /** The secret (account) it was submitted with. */
  account: string;
  /** Where this task is headed: success, failure, or nowhere. */
  fate: 'success' | 'failure' | 'stuck';
}

export interface MjBehaviour {
  /** Result codes for the next submissions, in order (then 1). */
  codes: number[];
  /** The next created task fails. */
  failNext: boolean;
  /** The next created task never finishes. */
  stuckNext: boolean;
}

export interface MockMidjourney {
  url: string;
  /** The first secret. */
  secret: string;
  secrets: string[];
  requests: RecordedMjRequest[];
  tasks: Map<string, MjTask>;
  behaviour: MjBehaviour;
  listCalls: number;
  maxConcurrentLists: number;
  /** When each list-by-condition call started and ended (ms): polls of two pods would overlap. */
  lists: Array<{ start: number; end: number }>;
  close(): Promise<void>;
}

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

const STEPS = ['NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'SUCCESS'] as const;

function buttonsFor(id: string) {
  const hash = id.padStart(8, '0');
  const button = (customId: string, label: string) => ({ customId, label, emoji: '', type: 2, style: 2 });
  return [
    ...[1, 2, 3, 4].map((i) => button(`MJ::JOB::upsample::${i}::${hash}`, `U${i}`)),
    button(`MJ::JOB::reroll::0::${hash}::SOLO`, '🔄'),
    ...[1, 2, 3, 4].map((i) => button(`MJ::JOB::variation::${i}::${hash}`, `V${i}`)),
  ];
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startMockMidjourney(secret: string | string[] = 'mj-secret'): Promise<MockMidjourney> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const requests: RecordedMjRequest[] = [];
  const tasks = new Map<string, MjTask>();
  let inFlight = 0;
  const mock: MockMidjourney = {
    url: '',
    close: async () => {},
    secret: secrets[0]!,
    secrets,
    requests,
    tasks,
    behaviour: { codes: [], failNext: false, stuckNext: false },
    listCalls: 0,
    maxConcurrentLists: 0,
    lists: [],
  };

  const advance = (task: MjTask) => {
    const now = Date.now();
    if (task.status === 'SUCCESS' || task.status === 'FAILURE') return;
    if (task.fate === 'stuck') {
      Object.assign(task, { status: 'IN_PROGRESS', progress: '10%', startTime: task.startTime || now });
      return;
    }
    const next = STEPS[STEPS.indexOf(task.status as (typeof STEPS)[number]) + 1] ?? 'SUCCESS';
    if (next === 'IN_PROGRESS') Object.assign(task, { status: next, progress: '50%', startTime: now });
    else if (next === 'SUCCESS' && task.fate === 'failure') {
      Object.assign(task, { status: 'FAILURE', progress: '', failReason: 'Banned prompt detected', finishTime: now });
    } else if (next === 'SUCCESS') {
      Object.assign(task, {
        status: 'SUCCESS',
        progress: '100%',
        finishTime: now,
        imageUrl: `${server.url}/attachments/${task.id}.png`,
        buttons: buttonsFor(task.id),
      });
    } else Object.assign(task, { status: next, progress: '0%' });
  };

  const create = (action: string, prompt: string, account: string): MjTask => {
    const id = `${Date.now()}${String(randomInt(0, 1000)).padStart(3, '0')}`;
    const fate = mock.behaviour.failNext ? 'failure' : mock.behaviour.stuckNext ? 'stuck' : 'success';
    mock.behaviour.failNext = false;
    mock.behaviour.stuckNext = false;
    const task: MjTask = {
      id,
      action,
      prompt,
      status: 'NOT_START',
      progress: '0%',
      imageUrl: '',
      failReason: '',
      buttons: [],
      submitTime: Date.now(),
      startTime: 0,
      finishTime: 0,
      properties: { finalPrompt: prompt },
      account,
      fate,
    };
    tasks.set(id, task);
    return task;
  };

  const view = ({ fate: _fate, account: _account, ...task }: MjTask) => ({
    ...task,
    promptEn: task.prompt,
    description: '',
    state: '',
  });

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!.replace(/^\/mj-(fast|relax|turbo)/, '');
    const body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (path.startsWith('/attachments/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return void res.end(PNG);
    }
    const account = String(req.headers['mj-api-secret'] ?? '');
    if (!secrets.includes(account)) return json(res, 401, { error: 'Unauthorized' });
    // Another account's task is as unknown as one never made.
    const own = (id: unknown) => {
      const task = tasks.get(String(id));
      return task?.account === account ? task : undefined;
    };

    if (req.method === 'POST' && path === '/mj/task/list-by-condition') {
      mock.listCalls++;
      inFlight++;
      const start = Date.now();
      mock.maxConcurrentLists = Math.max(mock.maxConcurrentLists, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
      mock.lists.push({ start, end: Date.now() });
      const found = (body?.ids ?? []).map(own).filter(Boolean) as MjTask[];
      for (const task of found) advance(task);
      return json(res, 200, found.map(view));
    }
    const fetchMatch = /^\/mj\/task\/([^/]+)\/(fetch|image-seed)$/.exec(path);
    if (req.method === 'GET' && fetchMatch) {
      const task = own(fetchMatch[1]);
      if (!task) return json(res, 404, { code: 3, description: '任务不存在' });
      if (fetchMatch[2] === 'image-seed') return json(res, 200, { code: 1, description: '成功', result: '3141592' });
      return json(res, 200, view(task));
    }
    const submit = /^\/mj\/(submit\/[a-z-]+|insight-face\/swap)$/.exec(path);
    if (req.method !== 'POST' || !submit) return json(res, 404, { error: 'Not Found' });

    let action = submit[1]!.replace('submit/', '').toUpperCase();
    if (submit[1] === 'submit/action') {
      const original = own(body?.taskId);
      const button = original?.buttons.find((b) => b.customId === body?.customId);
      if (!original || !button) return json(res, 200, { code: 4, description: '任务不存在或按钮无效', result: null });
      action = button.label.startsWith('U') ? 'UPSCALE' : button.label.startsWith('V') ? 'VARIATION' : 'REROLL';
    }
    if (submit[1] === 'submit/imagine' && typeof body?.prompt !== 'string') {
      return json(res, 400, { code: 4, description: 'prompt不能为空', result: null });
    }
    const code = mock.behaviour.codes.shift() ?? 1;
    if (submit[1] === 'submit/upload-discord-images') {
      if (!Array.isArray(body?.base64Array)) return json(res, 400, { code: 4, description: 'base64Array不能为空' });
      const urls = body.base64Array.map((_: unknown, i: number) => `${server.url}/attachments/upload-${i}.png`);
      return json(res, 200, { code, description: '上传成功', result: urls });
    }
    if (code === 23) return json(res, 200, { code, description: '队列已满，请稍后尝试', result: null, properties: {} });
    if (code === 24) {
      return json(res, 200, {
        code,
        description: '可能包含敏感词',
        result: null,
        properties: { promptEn: body?.prompt ?? '', bannedWord: 'banned' },
      });
    }
    const task = create(action, String(body?.prompt ?? ''), account);
    const description = code === 21 ? '任务已存在' : code === 22 ? '排队中，前面还有1个任务' : '提交成功';
    return json(res, 200, { code, description, result: task.id, properties: { discordInstanceId: '1' } });
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

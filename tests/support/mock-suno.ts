import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A Suno API proxy server (the `/suno/submit/{music,lyrics}`, `/suno/fetch` protocol new-api's SunoAPI
 * channels speak): every route checks `Authorization: Bearer <key>` (401 otherwise; given several keys it
 * is several accounts, as a multi-key channel's keys are, each key's fetches seeing only its own tasks) and answers
 * `{code, message, data}`. A submission answers its new task id as `data`, or an error when `refuseNext`
 * is set; music needs a prompt, tags or a gpt_description_prompt, lyrics a prompt. A task advances one
 * state each time it is fetched: NOT_START → SUBMITTED → QUEUED → IN_PROGRESS (50%) → SUCCESS (two clips
 * with audio/image/video URLs, or the lyrics), or FAILURE when created while `failNext` is set; a `stuck`
 * one stays IN_PROGRESS.
 */
export interface RecordedSunoRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface SunoTask {
  task_id: string;
  action: 'MUSIC' | 'LYRICS';
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  data: unknown;
  prompt: string;
  title: string;
  /** The key (account) it was submitted with. */
  account: string;
  fate: 'success' | 'failure' | 'stuck';
}

export interface MockSuno {
  url: string;
  /** The first key. */
  key: string;
  keys: string[];
  requests: RecordedSunoRequest[];
  tasks: Map<string, SunoTask>;
  /** `failReason`: what a failing task says (default: lyrics flagged). */
  behaviour: { refuseNext: boolean; failNext: boolean; stuckNext: boolean; failReason?: string };
  close(): Promise<void>;
}

const STEPS = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS'] as const;

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startMockSuno(key: string | string[] = 'suno-key'): Promise<MockSuno> {
  const keys = typeof key === 'string' ? [key] : key;
  const requests: RecordedSunoRequest[] = [];
  const tasks = new Map<string, SunoTask>();
  const mock: MockSuno = {
    url: '',
    key: keys[0]!,
    keys,
    requests,
    tasks,
    behaviour: { refuseNext: false, failNext: false, stuckNext: false },
    close: async () => {},
  };
  const cdn = () => mock.url.replace('127.0.0.1', 'localhost');

  const result = (task: SunoTask) => {
    if (task.action === 'LYRICS') {
      return { id: randomUUID(), title: task.title || 'Lyrics', text: `[Verse]\n${task.prompt}`, status: 'complete' };
    }
    return [1, 2].map((n) => {
      const id = `${task.task_id}-clip-${n}`;
      return {
        id,
        title: `${task.title || 'Untitled'} (${n})`,
        status: 'complete',
        audio_url: `${cdn()}/cdn/${id}.mp3`,
        video_url: `${cdn()}/cdn/${id}.mp4`,
        image_url: `${cdn()}/cdn/${id}.jpeg`,
        image_large_url: `${cdn()}/cdn/${id}-large.jpeg`,
        model_name: 'chirp-v4',
        metadata: { tags: 'pop', prompt: task.prompt, duration: 120 + n, type: 'gen' },
      };
    });
  };

  const advance = (task: SunoTask) => {
    const now = Math.floor(Date.now() / 1000);
    if (task.status === 'SUCCESS' || task.status === 'FAILURE') return;
    if (task.fate === 'stuck') {
      Object.assign(task, { status: 'IN_PROGRESS', progress: '10%', start_time: task.start_time || now });
      return;
    }
    const next = STEPS[STEPS.indexOf(task.status as (typeof STEPS)[number]) + 1] ?? 'SUCCESS';
    if (next === 'IN_PROGRESS') Object.assign(task, { status: next, progress: '50%', start_time: now });
    else if (next === 'SUCCESS' && task.fate === 'failure') {
      const reason = mock.behaviour.failReason ?? 'Unable to generate: lyrics flagged';
      Object.assign(task, { status: 'FAILURE', fail_reason: reason, finish_time: now });
    } else if (next === 'SUCCESS') {
      Object.assign(task, { status: 'SUCCESS', progress: '100%', finish_time: now, data: result(task) });
    } else Object.assign(task, { status: next, progress: '0%' });
  };

  const view = ({ fate: _f, prompt: _p, title: _t, account: _a, ...task }: SunoTask) => task;

  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0]!;
    const body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (path.startsWith('/cdn/')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      return void res.end('ID3');
    }
    const account = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!keys.includes(account)) {
      return json(res, 401, { code: 'unauthorized', message: 'invalid token', data: null });
    }
    // Another account's task is as unknown as one never made.
    const own = (id: unknown) => {
      const task = tasks.get(String(id));
      return task?.account === account ? task : undefined;
    };
    if (req.method === 'POST' && path === '/suno/fetch') {
      if (!Array.isArray(body?.ids)) return json(res, 400, { code: 'error', message: 'ids is required', data: null });
      const found = body.ids.map(own).filter(Boolean) as SunoTask[];
      for (const task of found) advance(task);
      return json(res, 200, { code: 'success', message: '', data: found.map(view) });
    }
    const fetchOne = /^\/suno\/fetch\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && fetchOne) {
      const task = own(fetchOne[1]);
      if (!task) return json(res, 404, { code: 'error', message: 'task not exist', data: null });
      return json(res, 200, { code: 'success', message: '', data: view(task) });
    }
    const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(path);
    if (req.method !== 'POST' || !submit) return json(res, 404, { code: 'error', message: 'not found', data: null });
    const action = submit[1] === 'music' ? 'MUSIC' : 'LYRICS';
    const prompt = typeof body?.prompt === 'string' ? body.prompt : '';
    const described = typeof body?.gpt_description_prompt === 'string' || typeof body?.tags === 'string';
    if (action === 'LYRICS' ? prompt === '' : prompt === '' && !described) {
      return json(res, 400, { code: 'error', message: 'prompt is required', data: null });
    }
    if (mock.behaviour.refuseNext) {
      mock.behaviour.refuseNext = false;
      return json(res, 500, { code: 'error', message: 'suno account has no credits left', data: null });
    }
    const fate = mock.behaviour.failNext ? 'failure' : mock.behaviour.stuckNext ? 'stuck' : 'success';
    mock.behaviour.failNext = false;
    mock.behaviour.stuckNext = false;
    const task: SunoTask = {
      task_id: randomUUID(),
      action,
      status: 'NOT_START',
      fail_reason: '',
      submit_time: Math.floor(Date.now() / 1000),
      start_time: 0,
      finish_time: 0,
      progress: '0%',
      data: null,
      prompt,
      title: typeof body?.title === 'string' ? body.title : '',
      account,
      fate,
    };
    tasks.set(task.task_id, task);
    return json(res, 200, { code: 'success', message: '', data: task.task_id });
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

// Task submissions (Midjourney, Suno, videos) carry prompts too: a listed word refuses the submission in
// the route's own error shape before anything is held or sent, or is starred in what the upstream gets.
let gateway: Gateway;
let drop: () => Promise<void>;
let mj: MockMidjourney;
let suno: MockSuno;
let sora: MockSora;
let key: string;

beforeAll(async () => {
  [mj, suno, sora] = await Promise.all([startMockMidjourney(), startMockSuno(), startMockSora()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const root = await setupRoot(gateway.url);
  const channels: Array<[number, string, string, string]> = [
    [2, mj.url, mj.secret, 'mj_imagine'],
    [36, suno.url, suno.key, 'suno_music'],
    [55, sora.url, sora.key, 'sora-2'],
  ];
  for (const [type, baseUrl, secret, models] of channels) {
    const created = await root.post('/api/channel/', {
      name: `up-${type}`,
      type,
      key: secret,
      base_url: baseUrl,
      models,
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  await gateway.options.set('ModelPrice', JSON.stringify({ mj_imagine: 0.1, suno_music: 0.1, 'sora-2': 0.3 }));
  key = (await root.post('/api/token/', { name: 'tasks', unlimited_quota: true })).body.data.key;
  await eventually(
    async () => (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json(),
    (list: any) => list.data?.length === 3,
    3000,
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([mj?.close(), suno?.close(), sora?.close()]);
});

async function post(path: string, body: Record<string, unknown> | FormData) {
  const json = !(body instanceof FormData);
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'mj-api-secret': key,
      'accept-language': 'en',
      ...(json ? { 'content-type': 'application/json' } : {}),
    },
    body: json ? JSON.stringify(body) : body,
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as any };
}

function videoForm(prompt: string): FormData {
  const form = new FormData();
  form.set('model', 'sora-2');
  form.set('prompt', prompt);
  form.set('seconds', '4');
  return form;
}

const upstreamRequests = () => mj.requests.length + suno.requests.length + sora.requests.length;

async function consumeLogs(): Promise<number> {
  const row = await gateway.store.db
    .selectFrom('logs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const WORDS = 'The prompt contains sensitive words: test_sensitive';

describe('task submissions', () => {
  it('are refused with a listed word, in each route’s error shape, before anything is held or sent', async () => {
    const imagine = await post('/mj/submit/imagine', { prompt: 'a Test_Sensitive lighthouse' });
    expect(imagine.status).toBe(400);
    expect(imagine.body.description).toContain(WORDS);
    const music = await post('/suno/submit/music', { prompt: 'la la', tags: 'test_sensitive pop', title: 'Song' });
    expect(music.status).toBe(400);
    expect(music.body).toMatchObject({ code: 'sensitive_words_detected', data: null });
    expect(music.body.message).toContain(WORDS);
    const video = await post('/v1/videos', { model: 'sora-2', prompt: 'a test_sensitive video', seconds: '4' });
    expect(video.status).toBe(400);
    expect(video.body.error).toMatchObject({ code: 'sensitive_words_detected' });
    expect(video.body.error.message).toContain(WORDS);
    const upload = await post('/v1/videos', videoForm('a test_sensitive upload'));
    expect(upload.status).toBe(400);
    expect(upload.body.error.code).toBe('sensitive_words_detected');
    expect(upstreamRequests()).toBe(0);
    expect(await consumeLogs()).toBe(0);
  });

  it('go upstream with the words starred when StopOnSensitiveEnabled is off, and are charged', async () => {
    await gateway.options.set('StopOnSensitiveEnabled', 'false');
    try {
      const imagine = await post('/mj/submit/imagine', { prompt: 'a Test_Sensitive lighthouse' });
      expect(imagine.body).toMatchObject({ code: 1 });
      expect(mj.requests.find((r) => r.path === '/mj/submit/imagine')?.body.prompt).toBe('a ************** lighthouse');

      const music = await post('/suno/submit/music', {
        prompt: 'sing test_sensitive',
        gpt_description_prompt: 'about test_sensitive',
        tags: 'test_sensitive pop',
        title: 'test_sensitive',
      });
      expect(music.body).toMatchObject({ code: 'success' });
      expect(suno.requests.find((r) => r.path === '/suno/submit/music')?.body).toMatchObject({
        prompt: 'sing **************',
        gpt_description_prompt: 'about **************',
        tags: '************** pop',
        title: '**************',
      });

      const video = await post('/v1/videos', { model: 'sora-2', prompt: 'a test_sensitive video', seconds: '4' });
      expect(video.status, JSON.stringify(video.body)).toBe(200);
      const upload = await post('/v1/videos', videoForm('a test_sensitive upload'));
      expect(upload.status, JSON.stringify(upload.body)).toBe(200);
      const prompts = sora.requests
        .filter((r) => r.method === 'POST' && r.path === '/v1/videos')
        .map((r) => r.fields.prompt);
      expect(prompts).toEqual(['a ************** video', 'a ************** upload']);
      await eventually(consumeLogs, (n) => n === 4, 5000);
    } finally {
      await gateway.options.set('StopOnSensitiveEnabled', 'true');
    }
  });
});

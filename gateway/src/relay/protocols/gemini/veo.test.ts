import { GenerateVideosOperation, GoogleGenAI } from '@google/genai';
import { JWT } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockGemini, startMockGemini } from '../../../../../tests/support/mock-gemini.ts';
import {
  createServiceAccount,
  type MockVertex,
  startMockVertex,
  type TestServiceAccount,
} from '../../../../../tests/support/mock-vertex.ts';
import { OutboundGuard } from '../../../http/outbound/guard.ts';
import type { FetchSettings } from '../../../http/outbound/policy.ts';
import { fetchVideoContent, sendVideoRequest } from '../../tasks/video/upstream.ts';
import { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { vertexProvider } from '../vertex/index.ts';
import { isRefusal, type VideoJob, type VideoState, type VideoTasks } from '../video-tasks.ts';
import { geminiProvider } from './index.ts';
import { veoBody, veoPlan } from './veo.ts';

/** fetch_setting.* at its defaults, and as the local mocks (127.0.0.1, random ports) need it. */
const fetchDefaults: FetchSettings = {
  enabled: true,
  allowPrivateIp: false,
  domainAllowList: false,
  domains: [],
  ipAllowList: false,
  ips: [],
  ports: ['80', '443', '8080', '8443'],
  ipFilterForDomains: true,
};
const loopback: FetchSettings = { ...fetchDefaults, allowPrivateIp: true, ports: [] };
const guard = (settings: FetchSettings) => new OutboundGuard({ settings: () => settings });

const job = (fields: Record<string, unknown>, model = 'veo-3.0-generate-001'): VideoJob => ({
  model,
  upstreamModel: model,
  prompt: 'a lighthouse at dusk',
  fields: { model, prompt: 'a lighthouse at dusk', ...fields },
  action: 'GENERATE',
});
const gemini = { gcsImages: false };
const vertex = { gcsImages: true };

describe("Veo's submission, checked and priced as new-api prices it", () => {
  it('renders 8 seconds at 720p unless told otherwise, billed × seconds × resolution ratio', () => {
    expect(veoPlan(job({}), gemini)).toEqual({ ratios: { seconds: 8, resolution: 1 }, seconds: '8', size: '720p' });
    // The generic API's seconds and size: 1920 on the longer side is 1080p, portrait is 9:16.
    expect(veoPlan(job({ seconds: '6', size: '1080x1920' }), gemini)).toEqual({
      ratios: { seconds: 6, resolution: 1 },
      seconds: '6',
      size: '1080x1920',
    });
    // Google's own names in metadata come first; 4K costs more on veo-3.1 (fast 2.333333×, else 1.5×).
    const fast = job({ seconds: '8', metadata: { durationSeconds: 4, resolution: '4K' } }, 'veo-3.1-fast-generate-001');
    expect(veoPlan(fast, gemini)).toMatchObject({ ratios: { seconds: 4, resolution: 2.333333 }, size: '4k' });
    expect(veoPlan(job({ resolution: '4k' }, 'veo-3.1-generate-preview'), gemini)).toMatchObject({
      ratios: { resolution: 1.5 },
    });
  });

  it('sends only Veo parameters, the seconds always, one sample', async () => {
    const body = JSON.parse(
      await veoBody(
        job({
          size: '1280x720',
          negative_prompt: 'fog',
          metadata: { personGeneration: 'allow_adult', sampleCount: 1 },
          image: 'data:image/png;base64,iVBORw0KGgo=',
          extra: 'not for Google',
        }),
        gemini,
      ),
    );
    expect(body).toEqual({
      instances: [
        { prompt: 'a lighthouse at dusk', image: { bytesBase64Encoded: 'iVBORw0KGgo=', mimeType: 'image/png' } },
      ],
      parameters: {
        negativePrompt: 'fog',
        personGeneration: 'allow_adult',
        resolution: '720p',
        aspectRatio: '16:9',
        durationSeconds: 8,
        sampleCount: 1,
      },
    });
    const stored = JSON.parse(await veoBody(job({ images: ['gs://bucket/first.jpg'] }), vertex));
    expect(stored.instances[0].image).toEqual({ gcsUri: 'gs://bucket/first.jpg', mimeType: 'image/jpeg' });
  });

  it('refuses what Google would refuse, and chat models, before anything is charged', () => {
    expect(veoPlan(job({}, 'gemini-2.5-flash'), gemini)).toMatch(/not a Veo video model/);
    expect(veoPlan(job({ seconds: '5' }), gemini)).toBe('seconds must be 4, 6 or 8');
    expect(veoPlan(job({ seconds: '5' }, 'veo-2.0-generate-001'), gemini)).toMatchObject({ seconds: '5' });
    expect(veoPlan(job({ seconds: '4' }, 'veo-2.0-generate-001'), gemini)).toBe('seconds must be from 5 to 8');
    expect(veoPlan(job({ resolution: '8k' }), gemini)).toMatch(/resolution must be one of/);
    expect(veoPlan(job({ aspect_ratio: '1:1' }), gemini)).toMatch(/aspect_ratio must be one of/);
    expect(veoPlan(job({ size: 'large' }), gemini)).toMatch(/size must be/);
    expect(veoPlan(job({ metadata: { sampleCount: 2 } }), gemini)).toMatch(/sampleCount must be 1/);
    expect(veoPlan(job({ image: 'gs://bucket/a.png' }), gemini)).toBe('image must be a data: URL (base64)');
    expect(veoPlan(job({ image: 'https://example.com/a.png' }), vertex)).toMatch(/gs:\/\/ URI/);
    expect(veoPlan(job({ images: ['gs://b/1.png', 'gs://b/2.png'] }), vertex)).toBe(
      'Veo takes one image, the first frame',
    );
    expect(veoPlan(job({ metadata: 'fast' }), gemini)).toBe('metadata must be an object');
  });
});

const transport = new Transport({ headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, connectionsPerOrigin: 4 });
const channel = (type: number, baseUrl: string, key: string) =>
  ({ id: 1, type, name: 'veo', baseUrl, keys: [key], other: '' }) as ChannelSnapshot;

/** Submits a job and asks after it until it ends, as the routes and the poller do. */
async function runToEnd(tasks: VideoTasks, ch: ChannelSnapshot, submitted: VideoJob) {
  const key = ch.keys[0]!;
  const upstream = { transport, tasks, channel: ch, key };
  const signal = AbortSignal.timeout(10_000);
  const plan = tasks.plan(submitted);
  if (typeof plan === 'string') throw new Error(plan);
  const sent = await sendVideoRequest(upstream, await tasks.submit(ch, key, submitted, plan), signal);
  const accepted = tasks.accepted(sent.status, await sent.body.text());
  if (isRefusal(accepted)) return { refusal: accepted };
  const ref = { upstreamId: accepted.id, upstreamModel: submitted.upstreamModel, action: 'GENERATE' };
  const states: VideoState[] = [];
  while (!['SUCCESS', 'FAILURE'].includes(states.at(-1)?.status ?? '')) {
    const answer = await sendVideoRequest(upstream, await tasks.query(ch, key, ref), signal);
    const state = tasks.state(answer.status, await answer.body.text());
    if (!state) throw new Error('not an operation');
    states.push(state);
  }
  const task = { ...ref, ...(states.at(-1)?.url ? { url: states.at(-1)!.url } : {}) };
  return { id: accepted.id, states, task, upstream };
}

describe('Veo on the Gemini API (type 24)', () => {
  let mock: MockGemini;
  beforeAll(async () => {
    mock = await startMockGemini();
    mock.behaviour = { validKeys: ['AIza-veo'] };
  });
  afterAll(() => mock.close());

  it("the mock's operations read as the official @google/genai client expects them", async () => {
    // This client's generateVideos speaks only Vertex; the Gemini API's submission is sent as Google documents it.
    const submitted = await fetch(`${mock.url}/v1beta/models/veo-3.0-generate-001:predictLongRunning`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'AIza-veo', 'content-type': 'application/json' },
      body: JSON.stringify({
        instances: [{ prompt: 'a kite' }],
        parameters: { durationSeconds: 8, aspectRatio: '16:9' },
      }),
    });
    const { name } = (await submitted.json()) as { name: string };
    expect(name).toMatch(/^models\/veo-3\.0-generate-001\/operations\//);
    const ai = new GoogleGenAI({ apiKey: 'AIza-veo', httpOptions: { baseUrl: mock.url, apiVersion: 'v1beta' } });
    let operation = new GenerateVideosOperation();
    operation.name = name;
    while (!operation.done) operation = await ai.operations.getVideosOperation({ operation });
    const uri = operation.response?.generatedVideos?.[0]?.video?.uri ?? '';
    expect(uri).toMatch(/\/v1beta\/files\/[^/]+:download\?alt=media$/);
    // The file takes the key, and redirects to a signed address that needs none.
    expect((await fetch(uri)).status).toBe(403);
    const redirect = await fetch(uri, { headers: { 'x-goog-api-key': 'AIza-veo' }, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const video = await fetch(redirect.headers.get('location')!);
    expect(Buffer.from(await video.arrayBuffer()).equals(mock.veo.content)).toBe(true);
  });

  it('submits with the key, polls to the video, keeps its URI without the key, downloads it with the key', async () => {
    const tasks = geminiProvider.video!;
    const ch = channel(24, mock.url, 'AIza-veo');
    const run = await runToEnd(tasks, ch, job({ seconds: '4' }));
    if ('refusal' in run) throw new Error(run.refusal?.message);
    const submit = mock.requests.find((r) => r.action === 'predictLongRunning')!;
    expect(submit.path).toBe('/v1beta/models/veo-3.0-generate-001:predictLongRunning');
    expect(submit.headers['x-goog-api-key']).toBe('AIza-veo');
    expect(run.states.map((s) => s.status)).toEqual(['IN_PROGRESS', 'SUCCESS']);
    expect(run.task.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1beta\/files\/[^/]+:download\?alt=media$/);
    expect(run.task.url).not.toContain('AIza');

    const request = (await tasks.content!(ch, 'AIza-veo', run.task, 'video'))!;
    // The signed address is the vendor's answer: the outbound guard refuses it where the mock lives (loopback)…
    await expect(
      fetchVideoContent(run.upstream, guard(fetchDefaults), request, AbortSignal.timeout(5000)),
    ).rejects.toMatchObject({ code: 'OUTBOUND_URL_REFUSED' });
    // …unless internal addresses are allowed.
    const content = await fetchVideoContent(run.upstream, guard(loopback), request, AbortSignal.timeout(5000));
    expect(content.status).toBe(200);
    expect(Buffer.from(await content.body.arrayBuffer()).equals(mock.veo.content)).toBe(true);
    // The key went to the file, not on to the signed address it redirected to.
    const signed = mock.requests.find((r) => r.path.startsWith('/download/'))!;
    expect(signed.headers['x-goog-api-key']).toBeUndefined();
    expect(await tasks.content!(ch, 'AIza-veo', run.task, 'thumbnail')).toBeUndefined();
  });

  it('keeps a video URI without a key Google put in it', () => {
    const uri = 'https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media&key=AIza-secret';
    const done = { name: 'models/veo-3.0-generate-001/operations/1', done: true };
    const response = { generateVideoResponse: { generatedSamples: [{ video: { uri } }] } };
    expect(geminiProvider.video!.state(200, JSON.stringify({ ...done, response }))).toEqual({
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      url: 'https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media',
    });
  });

  it("reads Google's refusals, failures and filtered videos", async () => {
    const tasks = geminiProvider.video!;
    const refused = await runToEnd(tasks, channel(24, mock.url, 'AIza-wrong'), job({}));
    expect(refused).toMatchObject({ refusal: { status: 400, code: 'INVALID_ARGUMENT', message: /API key not valid/ } });
    mock.veo.failNext = 'Veo could not render this prompt.';
    const failed = await runToEnd(tasks, channel(24, mock.url, 'AIza-veo'), job({}));
    expect('states' in failed && failed.states?.at(-1)).toEqual({
      status: 'FAILURE',
      progress: '100%',
      failReason: 'Veo could not render this prompt.',
    });
    mock.veo.filterNext = true;
    const filtered = await runToEnd(tasks, channel(24, mock.url, 'AIza-veo'), job({}));
    expect('states' in filtered && filtered.states?.at(-1)).toMatchObject({
      status: 'FAILURE',
      failReason: 'The prompt was blocked by the safety filters.',
    });
  });
});

/** google-auth-library's JWT client for the account, its token requests (always to Google's URL) sent to the mock. */
function authClientFor(who: TestServiceAccount, tokenUri: string): JWT {
  const client = new JWT({
    email: who.credentials.client_email,
    key: who.credentials.private_key,
    keyId: who.credentials.private_key_id,
    scopes: ['https://www.googleapis.com/auth/cloud-platform'],
  });
  client.transporter.interceptors.request.add({
    resolved: async (config) => {
      if (String(config.url) === 'https://oauth2.googleapis.com/token') config.url = new URL(tokenUri);
      return config;
    },
  });
  return client;
}

describe('Veo on Vertex AI (type 41)', () => {
  let mock: MockVertex;
  let account: TestServiceAccount;
  beforeAll(async () => {
    mock = await startMockVertex();
    account = createServiceAccount(mock.tokenUri, { project: 'veo-project', name: 'veo' });
    mock.trust(account);
    mock.trustApiKey('AQ.vertexExpressVeoKey-0123');
  });
  afterAll(() => mock.close());

  it("submits with the service account's access token, polls with fetchPredictOperation, decodes the inline video", async () => {
    const tasks = vertexProvider.video!;
    const ch = { ...channel(41, mock.url, account.json), other: 'us-central1' };
    const run = await runToEnd(tasks, ch, job({ seconds: '6', image: 'gs://bucket/first.png' }));
    if ('refusal' in run) throw new Error(run.refusal?.message);
    expect(run.id).toMatch(
      /^projects\/veo-project\/locations\/us-central1\/publishers\/google\/models\/veo-3\.0-generate-001\/operations\//,
    );
    const [submit, ...polls] = mock.requests;
    expect(submit).toMatchObject({ project: 'veo-project', location: 'us-central1', action: 'predictLongRunning' });
    expect(submit!.headers.authorization).toBe(`Bearer ${mock.grants[0]!.token}`);
    expect(submit!.body.instances[0].image).toEqual({ gcsUri: 'gs://bucket/first.png', mimeType: 'image/png' });
    expect(polls.map((p) => [p.action, p.body.operationName])).toEqual([
      ['fetchPredictOperation', run.id],
      ['fetchPredictOperation', run.id],
    ]);
    // Nothing of the video is kept: the content route asks the operation again and decodes it.
    expect(run.states.at(-1)).toEqual({ status: 'SUCCESS', progress: '100%', failReason: '' });
    const request = (await tasks.content!(ch, account.json, run.task, 'video'))!;
    const answer = await fetchVideoContent(run.upstream, guard(fetchDefaults), request, AbortSignal.timeout(5000));
    const video = tasks.contentBytes!(await answer.body.text());
    expect(typeof video !== 'string' && video.type).toBe('video/mp4');
    expect(typeof video !== 'string' && video.bytes.equals(mock.veo.content)).toBe(true);
  });

  it('the mock speaks Veo as the official @google/genai client expects it on Vertex', async () => {
    const ai = new GoogleGenAI({
      vertexai: true,
      project: 'veo-project',
      location: 'us-central1',
      googleAuthOptions: { authClient: authClientFor(account, mock.tokenUri) as never },
      httpOptions: { baseUrl: mock.url },
    });
    let operation = await ai.models.generateVideos({
      model: 'veo-3.0-fast-generate-001',
      source: { prompt: 'a kite' },
      config: { durationSeconds: 4, aspectRatio: '9:16', numberOfVideos: 1 },
    });
    expect(operation.name).toMatch(/^projects\/veo-project\/locations\/us-central1\/.*\/operations\//);
    while (!operation.done) operation = await ai.operations.getVideosOperation({ operation });
    const bytes = operation.response?.generatedVideos?.[0]?.video?.videoBytes ?? '';
    expect(Buffer.from(bytes, 'base64').equals(mock.veo.content)).toBe(true);
  });

  it('speaks express mode with an API key, and answers a refused service account as Google would', async () => {
    const tasks = vertexProvider.video!;
    const run = await runToEnd(tasks, channel(41, mock.url, 'AQ.vertexExpressVeoKey-0123'), job({}));
    expect('states' in run && run.states?.at(-1)?.status).toBe('SUCCESS');
    const express = mock.requests.filter((r) => r.headers['x-goog-api-key'] === 'AQ.vertexExpressVeoKey-0123');
    expect(express.map((r) => r.path)).toEqual([
      '/v1/publishers/google/models/veo-3.0-generate-001:predictLongRunning',
      '/v1/publishers/google/models/veo-3.0-generate-001:fetchPredictOperation',
      '/v1/publishers/google/models/veo-3.0-generate-001:fetchPredictOperation',
    ]);
    const stranger = createServiceAccount(mock.tokenUri, { project: 'veo-project', name: 'stranger' });
    const refused = await runToEnd(tasks, channel(41, mock.url, stranger.json), job({}));
    expect(refused).toMatchObject({ refusal: { status: 401, code: 'UNAUTHENTICATED' } });
  });
});

import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import type { VideoJob } from '../video-tasks.ts';
import { readViduState, viduCreation, viduPath, viduVideo } from './video.ts';

const channel = { id: 1, type: 52, baseUrl: 'https://api.vidu.example/', keys: ['vk'] } as ChannelSnapshot;
const job = (fields: Record<string, unknown>, model = 'viduq1'): VideoJob => ({
  model,
  upstreamModel: model,
  prompt: 'a fox',
  fields: { model, prompt: 'a fox', ...fields },
  action: 'GENERATE',
});

describe('Vidu video', () => {
  it("defaults each model's duration and resolution and refuses what Vidu would", () => {
    expect(viduCreation(job({}))).toEqual({
      model: 'viduq1',
      images: [],
      prompt: 'a fox',
      duration: 5,
      resolution: '1080p',
      movement_amplitude: 'auto',
    });
    expect(viduCreation(job({}, 'vidu2.0'))).toMatchObject({ duration: 4, resolution: '720p' });
    expect(viduCreation(job({ seconds: '8', size: '1280x720', seed: 7 }, 'vidu2.0'))).toMatchObject({
      duration: 8,
      resolution: '720p',
      seed: 7,
    });
    expect(viduCreation(job({ resolution: '360P', metadata: { bgm: true } }))).toMatchObject({
      resolution: '360p',
      bgm: true,
    });
    expect(viduCreation(job({ resolution: '4k' }))).toMatch(/^resolution must be one of/);
    expect(viduCreation(job({ seconds: '2.5' }))).toMatch(/^duration must be/);
    expect(viduCreation(job({ movement_amplitude: 'huge' }))).toMatch(/^movement_amplitude/);
    expect(viduCreation(job({ images: 'https://x/a.png' }))).toMatch(/^images must be/);
    expect(viduCreation(job({ metadata: { model: 'viduq2' } }))).toBe('metadata cannot change the model');
  });

  it('picks the creation endpoint by the number of reference images', () => {
    expect([0, 1, 2, 3].map(viduPath)).toEqual(['/text2video', '/img2video', '/start-end2video', '/reference2video']);
  });

  it('sends the creation with the key as a Token, priced per call', async () => {
    const submission = job({ image: 'https://img.example/a.png' });
    expect(viduVideo.plan(submission)).toEqual({ ratios: {}, seconds: '5', size: '1080p' });
    const request = await viduVideo.submit(channel, 'vk', submission, { ratios: {}, seconds: '5', size: '1080p' });
    expect(request).toMatchObject({
      url: 'https://api.vidu.example/ent/v2/img2video',
      method: 'POST',
      headers: { authorization: 'Token vk', 'content-type': 'application/json' },
    });
    expect(JSON.parse(String(request.body))).toMatchObject({ images: ['https://img.example/a.png'] });
    expect(
      await viduVideo.query(channel, 'vk', { upstreamId: 't 1', upstreamModel: 'viduq1', action: 'GENERATE' }),
    ).toEqual({
      url: 'https://api.vidu.example/ent/v2/tasks/t%201/creations',
      method: 'GET',
      headers: { authorization: 'Token vk', accept: 'application/json' },
    });
  });

  it('reads submissions and task states, refusals passed on', () => {
    expect(viduVideo.accepted(200, JSON.stringify({ task_id: '88', state: 'created', credits: 4 }))).toEqual({
      id: '88',
      state: { status: 'SUBMITTED', progress: '0%', failReason: '' },
    });
    expect(
      viduVideo.accepted(200, JSON.stringify({ task_id: '88', state: 'failed', err_code: 'AuditSubmitIllegal' })),
    ).toMatchObject({
      refused: true,
      status: 400,
      message: 'AuditSubmitIllegal',
    });
    expect(viduVideo.accepted(401, JSON.stringify({ reason: 'Unauthorized', message: 'bad token' }))).toEqual({
      refused: true,
      status: 401,
      code: 'Unauthorized',
      message: 'bad token',
    });
    expect(readViduState({ state: 'queueing' })?.status).toBe('QUEUED');
    expect(readViduState({ state: 'processing' })).toEqual({ status: 'IN_PROGRESS', progress: '50%', failReason: '' });
    expect(
      readViduState({ state: 'success', creations: [{ url: 'https://v/1.mp4', cover_url: 'https://v/1.jpg' }] }),
    ).toEqual({
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      url: 'https://v/1.mp4',
    });
    expect(readViduState({ state: 'success', creations: [] })).toBeUndefined();
    expect(readViduState({ state: 'failed', err_code: 'CreditInsufficient' })?.failReason).toBe('CreditInsufficient');
    expect(viduVideo.state(500, '{}')).toBeUndefined();
    expect(viduVideo.state(200, '{"state":"weird"}')).toBeUndefined();
  });
});

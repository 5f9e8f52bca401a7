import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import type { VideoJob } from '../video-tasks.ts';
import { klingHeaders, signKlingToken } from './jwt.ts';
import { IMAGE2VIDEO, klingRequest, klingVideo, readKlingTask, TEXT2VIDEO } from './video.ts';

const job = (fields: Record<string, unknown>, action = 'GENERATE', prompt = 'a fox'): VideoJob => ({
  model: 'kling-v1',
  upstreamModel: 'kling-v1-6',
  prompt,
  fields,
  action,
});
const channel = { baseUrl: 'https://api.klingai.com/' } as ChannelSnapshot;
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe('Kling auth', () => {
  it('signs an HS256 JWT naming the access key, valid from 5 s ago for 30 minutes', () => {
    const token = signKlingToken('ak', 'sk', 1_700_000_000);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    expect(decode(header)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decode(payload)).toEqual({ iss: 'ak', exp: 1_700_001_800, nbf: 1_699_999_995 });
    expect(signature).toBe(createHmac('sha256', 'sk').update(`${header}.${payload}`).digest('base64url'));
  });

  it('takes the key as AccessKey|SecretKey and refuses any other shape', () => {
    const { authorization } = klingHeaders(' ak | sk ', () => 1_700_000_000_000);
    expect(authorization).toBe(`Bearer ${signKlingToken('ak', 'sk', 1_700_000_000)}`);
    expect(() => klingHeaders('just-one-part')).toThrow(/AccessKey\|SecretKey/);
  });
});

describe('Kling requests', () => {
  it('maps the generic API: text2video without an image, Kling defaults, size as an aspect ratio', () => {
    expect(klingRequest(job({ seconds: '10', size: '1920x1080', mode: 'pro' }))).toEqual({
      action: TEXT2VIDEO,
      body: { model_name: 'kling-v1-6', prompt: 'a fox', mode: 'pro', duration: '10', aspect_ratio: '16:9' },
    });
    expect(klingRequest(job({}))).toEqual({
      action: TEXT2VIDEO,
      body: { model_name: 'kling-v1-6', prompt: 'a fox', mode: 'std', duration: '5', aspect_ratio: '16:9' },
    });
    expect(klingRequest(job({ size: '720x1280' }))).toMatchObject({ body: { aspect_ratio: '9:16' } });
    expect(klingRequest(job({ size: '1:1' }))).toMatchObject({ body: { aspect_ratio: '1:1' } });
    expect(klingRequest(job({ size: '640x480' }))).toBe('size must have the aspect ratio 16:9, 9:16 or 1:1');
  });

  it('makes an image video when an image came, the data URL prefix stripped, metadata over the fields', () => {
    const request = klingRequest(
      job({
        duration: 5,
        images: ['data:image/png;base64,iVBORw0KGgo='],
        metadata: { negative_prompt: 'blur', mode: 'pro', duration: '10', model_name: 'kling-v2-master' },
        callback_url: 'https://example.com/hook',
      }),
    );
    expect(request).toEqual({
      action: IMAGE2VIDEO,
      body: {
        model_name: 'kling-v1-6',
        image: 'iVBORw0KGgo=',
        negative_prompt: 'blur',
        prompt: 'a fox',
        mode: 'pro',
        duration: '10',
      },
    });
  });

  it("keeps a native route's action and Kling's own fields, and refuses what Kling would", () => {
    const native = klingRequest(
      job(
        { model_name: 'kling-v1', image_tail: 'https://x/end.png', camera_control: { type: 'simple' }, cfg_scale: 0.3 },
        IMAGE2VIDEO,
        '',
      ),
    );
    expect(native).toEqual({
      action: IMAGE2VIDEO,
      body: {
        model_name: 'kling-v1-6',
        image_tail: 'https://x/end.png',
        camera_control: { type: 'simple' },
        cfg_scale: 0.3,
        mode: 'std',
        duration: '5',
      },
    });
    expect(klingRequest(job({ image: 'https://x/a.png' }, TEXT2VIDEO))).toMatchObject({ action: TEXT2VIDEO });
    expect(klingRequest(job({}, IMAGE2VIDEO))).toBe('image or image_tail is required for image2video');
    expect(klingRequest(job({ mode: 'ultra' }))).toBe('mode must be std or pro');
    expect(klingRequest(job({ duration: '5.5' }))).toMatch(/^duration must be a whole number/);
  });

  it('prices per call (no ratios, as new-api) and keeps the task under the endpoint it went to', () => {
    expect(klingVideo.plan(job({ seconds: '10', size: '1080x1920' }))).toEqual({
      ratios: {},
      seconds: '10',
      size: '9:16',
      action: TEXT2VIDEO,
    });
    expect(klingVideo.plan(job({ image: 'https://x/a.png' }))).toMatchObject({ action: IMAGE2VIDEO, size: '' });
  });

  it('submits to the endpoint of the action and queries the same one, each with a fresh JWT', async () => {
    const submit = await klingVideo.submit(channel, 'ak|sk', job({ image: 'https://x/a.png' }), {
      ratios: {},
      seconds: '5',
      size: '',
    });
    expect(submit.url).toBe('https://api.klingai.com/v1/videos/image2video');
    expect(submit.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const query = await klingVideo.query(channel, 'ak|sk', {
      upstreamId: 't/1',
      upstreamModel: 'x',
      action: TEXT2VIDEO,
    });
    expect(query).toMatchObject({ method: 'GET', url: 'https://api.klingai.com/v1/videos/text2video/t%2F1' });
  });
});

describe('Kling answers', () => {
  const task = (data: Record<string, unknown>) => ({ code: 0, message: 'SUCCEED', request_id: 'r', data });

  it('reads task states, the video URL of a finished one and the reason of a failed one', () => {
    expect(readKlingTask(task({ task_id: 't', task_status: 'submitted' }))).toEqual({
      id: 't',
      status: 'SUBMITTED',
      progress: '0%',
      failReason: '',
    });
    expect(readKlingTask(task({ task_id: 't', task_status: 'processing' }))?.status).toBe('IN_PROGRESS');
    expect(
      readKlingTask(
        task({
          task_id: 't',
          task_status: 'succeed',
          task_result: { videos: [{ id: 'v', url: 'https://cdn/v.mp4' }] },
        }),
      ),
    ).toEqual({ id: 't', status: 'SUCCESS', progress: '100%', failReason: '', url: 'https://cdn/v.mp4' });
    expect(readKlingTask(task({ task_id: 't', task_status: 'failed', task_status_msg: 'risk' }))?.failReason).toBe(
      'risk',
    );
    expect(readKlingTask(task({ task_id: 't', task_status: 'odd' }))).toBeUndefined();
    expect(readKlingTask({ code: 1001, message: 'x' })).toBeUndefined();
  });

  it("accepts a submission by its task id and passes Kling's refusals on with their code", () => {
    const ok = JSON.stringify(task({ task_id: 'abc', task_status: 'submitted' }));
    expect(klingVideo.accepted(200, ok)).toEqual({
      id: 'abc',
      state: { status: 'SUBMITTED', progress: '0%', failReason: '' },
    });
    expect(klingVideo.accepted(429, JSON.stringify({ code: 1102, message: 'exhausted', request_id: 'r' }))).toEqual({
      refused: true,
      status: 429,
      code: '1102',
      message: 'exhausted',
    });
    expect(klingVideo.accepted(200, JSON.stringify({ code: 1201, message: 'bad' }))).toMatchObject({ status: 400 });
    expect(klingVideo.accepted(502, 'gateway down')).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(klingVideo.state(500, ok)).toBeUndefined();
  });
});

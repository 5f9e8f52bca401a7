import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import type { VideoJob } from '../video-tasks.ts';
import { readWanTask, wanResolutionRatio, wanSynthesis, wanVideo } from './video.ts';

const channel = { id: 1, type: 17, baseUrl: 'https://dash.example', keys: ['dk'] } as ChannelSnapshot;
const job = (fields: Record<string, unknown>, model = 'wan2.2-i2v-plus'): VideoJob => ({
  model,
  upstreamModel: model,
  prompt: 'a tram',
  fields: { model, prompt: 'a tram', ...fields },
  action: 'GENERATE',
});

describe('Ali Wan video', () => {
  it('builds text models a size and image models a resolution, defaulted per model', () => {
    expect(wanSynthesis(job({ size: '1280x720' }, 'wan2.2-t2v-plus'))).toEqual({
      synthesis: {
        model: 'wan2.2-t2v-plus',
        input: { prompt: 'a tram' },
        parameters: { duration: 5, size: '1280*720' },
      },
      seconds: 5,
      shown: '1280*720',
      tier: '720P',
    });
    expect(wanSynthesis(job({ image: 'https://img/a.png' }))).toMatchObject({
      synthesis: { input: { prompt: 'a tram', img_url: 'https://img/a.png' }, parameters: { resolution: '1080P' } },
      shown: '1080P',
    });
    expect(
      wanSynthesis(job({ images: ['https://a', 'https://b'], resolution: '480p' }, 'wan2.2-kf2v-flash')),
    ).toMatchObject({
      synthesis: {
        input: { first_frame_url: 'https://a', last_frame_url: 'https://b' },
        parameters: { resolution: '480P' },
      },
    });
    expect(
      wanSynthesis(job({ image: 'https://a', metadata: { parameters: { seed: 3, prompt_extend: false } } })),
    ).toMatchObject({ synthesis: { parameters: { seed: 3, prompt_extend: false, duration: 5 } } });
    expect(wanSynthesis(job({}))).toMatch(/makes a video from an image/);
    expect(wanSynthesis(job({ image: 'https://a', resolution: '2K' }))).toMatch(/^resolution must be one of/);
    expect(wanSynthesis(job({ image: 'https://a', metadata: { model: 'x' } }))).toBe(
      'metadata cannot change the model',
    );
  });

  it('prices the seconds, and the resolution for models whose price depends on it', () => {
    expect(wanResolutionRatio('wan2.2-i2v-plus', '1080P')).toBe(5);
    expect(wanResolutionRatio('wan2.5-i2v-preview', '1080P')).toBe(3.333333);
    expect(wanResolutionRatio('wan2.2-i2v-flash', '720P')).toBe(2);
    expect(wanResolutionRatio('wan2.2-t2v-plus', '1080P')).toBeUndefined();
    expect(wanVideo.plan(job({ image: 'https://a', resolution: '480P', seconds: '5' }))).toEqual({
      ratios: { seconds: 5, resolution: 1 },
      seconds: '5',
      size: '480P',
    });
    expect(wanVideo.plan(job({ size: '1920x1080' }, 'wan2.2-t2v-plus'))).toEqual({
      ratios: { seconds: 5 },
      seconds: '5',
      size: '1920*1080',
    });
  });

  it('submits asynchronously with the Bearer key and reads DashScope tasks', async () => {
    const submission = job({ image: 'https://a' });
    const plan = wanVideo.plan(submission);
    if (typeof plan === 'string') throw new Error(plan);
    expect(await wanVideo.submit(channel, 'dk', submission, plan)).toMatchObject({
      url: 'https://dash.example/api/v1/services/aigc/video-generation/video-synthesis',
      headers: { authorization: 'Bearer dk', 'x-dashscope-async': 'enable' },
    });
    expect((await wanVideo.query(channel, 'dk', { upstreamId: 't-1', upstreamModel: '', action: '' })).url).toBe(
      'https://dash.example/api/v1/tasks/t-1',
    );
    expect(
      wanVideo.accepted(200, JSON.stringify({ output: { task_id: 't-1', task_status: 'PENDING' }, request_id: 'r' })),
    ).toEqual({
      id: 't-1',
      state: { status: 'QUEUED', progress: '0%', failReason: '' },
    });
    expect(
      wanVideo.accepted(400, JSON.stringify({ code: 'InvalidParameter', message: 'bad size', request_id: 'r' })),
    ).toEqual({
      refused: true,
      status: 400,
      code: 'InvalidParameter',
      message: 'bad size',
    });
    expect(readWanTask({ output: { task_status: 'RUNNING' } })?.status).toBe('IN_PROGRESS');
    expect(readWanTask({ output: { task_status: 'SUCCEEDED', video_url: 'https://oss/v.mp4' } })).toEqual({
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      url: 'https://oss/v.mp4',
    });
    expect(
      readWanTask({ output: { task_status: 'FAILED', code: 'DataInspectionFailed', message: 'unsafe' } })?.failReason,
    ).toBe('DataInspectionFailed: unsafe');
    expect(readWanTask({ output: { task_status: 'CANCELED' } })?.status).toBe('FAILURE');
    expect(wanVideo.state(200, '{"output":{"task_status":"WHAT"}}')).toBeUndefined();
  });
});

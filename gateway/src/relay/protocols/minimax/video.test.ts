import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import type { VideoJob } from '../video-tasks.ts';
import { hailuoGeneration, hailuoVideo, readHailuoState } from './video.ts';

const channel = { id: 1, type: 35, baseUrl: '', keys: ['mk'] } as ChannelSnapshot;
const job = (fields: Record<string, unknown>, model = 'MiniMax-Hailuo-02'): VideoJob => ({
  model,
  upstreamModel: model,
  prompt: 'a heron',
  fields: { model, prompt: 'a heron', ...fields },
  action: 'GENERATE',
});

describe('MiniMax Hailuo video', () => {
  it("defaults the duration and each model's resolution, takes the first frame, and refuses what MiniMax would", () => {
    expect(hailuoGeneration(job({}))).toEqual({
      model: 'MiniMax-Hailuo-02',
      prompt: 'a heron',
      duration: 6,
      resolution: '768P',
    });
    expect(hailuoGeneration(job({ image: 'data:image/png;base64,AA==' }, 'I2V-01'))).toEqual({
      model: 'I2V-01',
      prompt: 'a heron',
      duration: 6,
      resolution: '720P',
      first_frame_image: 'data:image/png;base64,AA==',
    });
    expect(hailuoGeneration(job({ seconds: '10', size: '1920x1080', prompt_optimizer: false }))).toMatchObject({
      duration: 10,
      resolution: '1080P',
      prompt_optimizer: false,
    });
    expect(hailuoGeneration(job({ resolution: '512p' }))).toMatchObject({ resolution: '512P' });
    expect(hailuoGeneration(job({ seconds: '8' }))).toBe('duration must be one of 6, 10');
    expect(hailuoGeneration(job({ resolution: '4K' }))).toMatch(/^resolution must be one of/);
  });

  it("sends the generation with the Bearer key to the type's default host, priced per call", async () => {
    expect(hailuoVideo.plan(job({}))).toEqual({ ratios: {}, seconds: '6', size: '768P' });
    const request = await hailuoVideo.submit(channel, 'mk', job({}), { ratios: {}, seconds: '6', size: '768P' });
    expect(request).toMatchObject({
      url: 'https://api.minimax.chat/v1/video_generation',
      method: 'POST',
      headers: { authorization: 'Bearer mk' },
    });
    const ref = { upstreamId: '1069', upstreamModel: 'MiniMax-Hailuo-02', action: 'GENERATE' };
    expect((await hailuoVideo.query(channel, 'mk', ref)).url).toBe(
      'https://api.minimax.chat/v1/query/video_generation?task_id=1069',
    );
    expect((await hailuoVideo.fileUrl!.request(channel, 'mk', '77')).url).toBe(
      'https://api.minimax.chat/v1/files/retrieve?file_id=77',
    );
  });

  it('reads answers: refusals in base_resp with their HTTP status, states, and the file address', () => {
    const ok = { status_code: 0, status_msg: 'success' };
    expect(hailuoVideo.accepted(200, JSON.stringify({ task_id: '1069', base_resp: ok }))).toEqual({
      id: '1069',
      state: { status: 'SUBMITTED', progress: '0%', failReason: '' },
    });
    expect(
      hailuoVideo.accepted(
        200,
        JSON.stringify({ task_id: '', base_resp: { status_code: 1004, status_msg: 'login fail' } }),
      ),
    ).toEqual({ refused: true, status: 401, code: '1004', message: 'MiniMax 1004: login fail' });
    expect(
      hailuoVideo.accepted(200, JSON.stringify({ base_resp: { status_code: 1008, status_msg: 'no balance' } })),
    ).toMatchObject({
      status: 403,
    });
    expect(readHailuoState({ status: 'Queueing', base_resp: ok })?.status).toBe('QUEUED');
    expect(readHailuoState({ status: 'Processing', base_resp: ok })?.progress).toBe('50%');
    expect(readHailuoState({ status: 'Success', file_id: '77', base_resp: ok })).toEqual({
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      file: '77',
    });
    expect(readHailuoState({ status: 'Fail', base_resp: { status_code: 1026, status_msg: 'sensitive' } })).toEqual({
      status: 'FAILURE',
      progress: '100%',
      failReason: 'sensitive',
    });
    expect(readHailuoState({ status: '', base_resp: { status_code: 1002, status_msg: 'rate limit' } })).toBeUndefined();
    const file = { file: { file_id: 77, download_url: 'https://cdn/77.mp4' }, base_resp: ok };
    expect(hailuoVideo.fileUrl!.read(200, JSON.stringify(file))).toBe('https://cdn/77.mp4');
    expect(hailuoVideo.fileUrl!.read(200, JSON.stringify({ base_resp: { status_code: 1004 } }))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import { readSeedanceTask, seedanceParams, seedanceText, seedanceTierRatio, seedanceVideo } from './video.ts';

const job = (model: string, fields: Record<string, unknown>) => ({
  model,
  upstreamModel: model,
  prompt: 'a paper boat on a river',
  fields,
  action: 'GENERATE',
});

describe('Seedance wire', () => {
  it('reads the generic fields and metadata, refusing what Ark refuses', () => {
    expect(seedanceParams({})).toEqual({ seconds: 5, resolution: '720p', media: [] });
    expect(
      seedanceParams({ seconds: '10', metadata: { resolution: '1080P', ratio: '9:16', seed: 3, watermark: false } }),
    ).toEqual({ seconds: 10, resolution: '1080p', ratio: '9:16', seed: 3, watermark: false, media: [] });
    expect(seedanceParams({ size: '480p', aspect_ratio: 'adaptive' })).toMatchObject({
      resolution: '480p',
      ratio: 'adaptive',
    });
    expect(seedanceParams({ seconds: '1' })).toMatch(/^duration must be/);
    expect(seedanceParams({ resolution: '4k' })).toMatch(/^resolution must be/);
    expect(seedanceParams({ ratio: '2:1' })).toMatch(/^ratio must be/);
    expect(seedanceParams({ metadata: { camera_fixed: 'yes' } })).toBe('camera_fixed must be true or false');
    expect(seedanceParams({ metadata: { content: [{ type: 'video_url' }] } })).toMatch(/^metadata.content items/);
  });

  it('sends the prompt with its text commands and the reference media in Ark content items', async () => {
    const channel = { type: 54, baseUrl: 'https://ark.example/' } as ChannelSnapshot;
    const fields = { images: ['https://img/first.png', 'https://img/last.png'], seconds: '6', ratio: '16:9' };
    const request = await seedanceVideo.submit(channel, 'ark-key', job('doubao-seedance-1-0-pro-250528', fields), {
      ratios: {},
      seconds: '6',
      size: '720p',
    });
    expect(request).toMatchObject({
      url: 'https://ark.example/api/v3/contents/generations/tasks',
      method: 'POST',
      headers: { authorization: 'Bearer ark-key', 'content-type': 'application/json' },
    });
    expect(JSON.parse(String(request.body))).toEqual({
      model: 'doubao-seedance-1-0-pro-250528',
      content: [
        { type: 'text', text: 'a paper boat on a river --resolution 720p --duration 6 --ratio 16:9' },
        { type: 'image_url', image_url: { url: 'https://img/first.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://img/last.png' }, role: 'last_frame' },
      ],
    });
    expect(seedanceText(' x ', { seconds: 5, resolution: '480p', cameraFixed: true, media: [] })).toBe(
      'x --resolution 480p --duration 5 --camerafixed true',
    );
  });

  it("prices the Seedance 2.0 tiers by new-api's table, other models at their base", () => {
    const pro = 'doubao-seedance-2-0-260128';
    expect(seedanceTierRatio(pro, '720p', false)).toBe(1);
    expect(seedanceTierRatio(pro, '720p', true)).toBe(28 / 46);
    expect(seedanceTierRatio(pro, '1080p', false)).toBe(51 / 46);
    expect(seedanceTierRatio(pro, '1080p', true)).toBe(31 / 46);
    expect(seedanceTierRatio('doubao-seedance-2-0-fast-260128', '480p', true)).toBe(22 / 37);
    expect(seedanceTierRatio('doubao-seedance-2-0-fast-260128', '1080p', false)).toBe(1);
    expect(seedanceTierRatio('doubao-seedance-1-0-pro-250528', '1080p', true)).toBe(1);
    const withVideo = { metadata: { content: [{ type: 'video_url', video_url: { url: 'https://v/ref.mp4' } }] } };
    expect(seedanceVideo.plan(job(pro, withVideo))).toEqual({
      ratios: { video_input: 28 / 46 },
      seconds: '5',
      size: '720p',
    });
    expect(seedanceVideo.plan(job(pro, { seconds: '10' }))).toEqual({ ratios: {}, seconds: '10', size: '720p' });
  });

  it('reads Ark tasks into task statuses, with the video and the tokens it used', () => {
    expect(seedanceVideo.accepted(200, JSON.stringify({ id: 'cgt-1' }))).toEqual({
      id: 'cgt-1',
      state: { status: 'SUBMITTED', progress: '0%', failReason: '' },
    });
    const refused = { error: { code: 'InvalidParameter', message: 'bad duration', type: 'BadRequest' } };
    expect(seedanceVideo.accepted(400, JSON.stringify(refused))).toEqual({
      refused: true,
      status: 400,
      code: 'InvalidParameter',
      message: 'bad duration',
    });
    expect(readSeedanceTask({ id: 'c', status: 'queued' })).toEqual({
      status: 'QUEUED',
      progress: '10%',
      failReason: '',
    });
    expect(readSeedanceTask({ id: 'c', status: 'running' })?.status).toBe('IN_PROGRESS');
    expect(
      readSeedanceTask({
        id: 'c',
        status: 'succeeded',
        content: { video_url: 'https://v/c.mp4' },
        usage: { completion_tokens: 108900, total_tokens: 108900 },
      }),
    ).toEqual({ status: 'SUCCESS', progress: '100%', failReason: '', url: 'https://v/c.mp4', totalTokens: 108900 });
    expect(readSeedanceTask({ id: 'c', status: 'failed', error: { message: 'sensitive' } })?.failReason).toBe(
      'sensitive',
    );
    expect(readSeedanceTask({ id: 'c', status: 'cancelled' })?.status).toBe('FAILURE');
    expect(readSeedanceTask({ id: 'c', status: 'paused' })).toBeUndefined();
    expect(seedanceVideo.state(401, JSON.stringify({ error: { code: 'AuthenticationError' } }))).toBeUndefined();
  });
});

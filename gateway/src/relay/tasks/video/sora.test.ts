import { describe, expect, it } from 'vitest';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { readSoraVideo, soraParams, soraRatios, videoObject } from './sora.ts';

describe('Sora wire', () => {
  it('defaults seconds and size as OpenAI does and refuses values it would refuse', () => {
    expect(soraParams(undefined, '')).toEqual({ seconds: '4', size: '720x1280' });
    expect(soraParams(8, '1792x1024')).toEqual({ seconds: '8', size: '1792x1024' });
    expect(soraParams('5', undefined)).toBe('seconds must be one of 4, 8, 12');
    expect(soraParams('4', '640x480')).toMatch(/^size must be one of/);
  });

  it('prices by seconds and charges the large frames 1.666667 times', () => {
    expect(soraRatios({ seconds: '12', size: '1280x720' })).toEqual({ seconds: 12, size: 1 });
    expect(soraRatios({ seconds: '4', size: '1024x1792' })).toEqual({ seconds: 4, size: 1.666667 });
  });

  it('reads upstream video objects into task statuses', () => {
    expect(readSoraVideo({ id: 'v1', status: 'in_progress', progress: 42.4 })).toEqual({
      id: 'v1',
      status: 'IN_PROGRESS',
      progress: '42%',
      failReason: '',
    });
    expect(readSoraVideo({ id: 'v1', status: 'completed', progress: 0 })?.progress).toBe('100%');
    expect(readSoraVideo({ id: 'v1', status: 'failed', error: { message: 'blocked' } })?.failReason).toBe('blocked');
    expect(readSoraVideo({ id: 'v1', status: 'weird' })).toBeUndefined();
    expect(readSoraVideo({ status: 'queued' })).toBeUndefined();
  });

  it("shows a stored task as OpenAI's video object under the public id", () => {
    const row = {
      task_id: 'video_abc',
      status: 'FAILURE',
      progress: '50%',
      submit_time: 1700000000,
      finish_time: 1700000100,
      fail_reason: 'upstream timeout',
      properties: JSON.stringify({ origin_model_name: 'sora-2', input: 'p', seconds: '8', size: '1280x720' }),
    } as unknown as TaskRow;
    expect(videoObject(row)).toMatchObject({
      id: 'video_abc',
      object: 'video',
      model: 'sora-2',
      status: 'failed',
      progress: 50,
      created_at: 1700000000,
      completed_at: null,
      seconds: '8',
      size: '1280x720',
      error: { code: 'video_generation_failed', message: 'upstream timeout' },
    });
  });
});

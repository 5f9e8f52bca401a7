import { describe, expect, it } from 'vitest';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { videoObject, videoUrl } from './view.ts';

describe('video view', () => {
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

  it('reads the vendor URL a finished task keeps in its data', () => {
    expect(videoUrl({ data: JSON.stringify({ url: 'https://cdn.example/v.mp4' }) })).toBe('https://cdn.example/v.mp4');
    expect(videoUrl({ data: '' })).toBeUndefined();
    expect(videoUrl({ data: 'null' })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { MidjourneyRow } from '../../../store/repositories/task-billing.ts';
import { mjTaskView } from './view.ts';

const row = {
  id: 3,
  code: 1,
  user_id: 1,
  action: 'IMAGINE',
  mj_id: '1712',
  prompt: 'p',
  prompt_en: 'p',
  description: '',
  state: '',
  submit_time: 1,
  start_time: 2,
  finish_time: 3,
  image_url: 'https://cdn.example/a.png',
  video_url: '',
  video_urls: '',
  status: 'SUCCESS',
  progress: '100%',
  fail_reason: '',
  channel_id: 1,
  quota: 10,
  buttons: '[{"customId":"MJ::JOB::upsample::1::h","label":"U1"}]',
  properties: 'not json',
  token_id: 1,
  group: 'default',
  model_name: 'mj_imagine',
  notify_hook: '',
  key_index: 1,
} satisfies MidjourneyRow;

describe('a task as midjourney-proxy clients read it', () => {
  it('points the image at the gateway with MjForwardUrlEnabled, at the upstream without', () => {
    expect(mjTaskView(row, 'https://gw.example').imageUrl).toBe('https://gw.example/mj/image/1712');
    expect(mjTaskView(row, undefined).imageUrl).toBe('https://cdn.example/a.png');
    expect(mjTaskView({ ...row, image_url: '' }, 'https://gw.example').imageUrl).toBe('');
  });

  it('answers stored JSON as values, and unreadable JSON as empty', () => {
    const view = mjTaskView(row, undefined);
    expect(view).toMatchObject({ id: '1712', status: 'SUCCESS', submitTime: 1, finishTime: 3, videoUrls: [] });
    expect(view.buttons).toEqual([{ customId: 'MJ::JOB::upsample::1::h', label: 'U1' }]);
    expect(view.properties).toEqual({});
  });
});

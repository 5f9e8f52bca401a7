import { describe, expect, it } from 'vitest';
import type { MidjourneyRow } from '../../store/repositories/tasks.ts';
import { midjourneyView } from './view.ts';

const row = { id: 7, mj_id: '1717', image_url: 'http://upstream.example/a.png', user_id: 3 } as MidjourneyRow;

describe('midjourneyView', () => {
  it('keeps the upstream image URL without forwarding', () => {
    expect(midjourneyView(row).image_url).toBe('http://upstream.example/a.png');
    expect(midjourneyView(row)).not.toHaveProperty('username');
  });

  it("points the image at the gateway's /mj/image/{id} when forwarding, relative when no ServerAddress", () => {
    expect(midjourneyView(row, 'alice', 'https://gw.example').image_url).toBe('https://gw.example/mj/image/1717');
    expect(midjourneyView(row, undefined, '').image_url).toBe('/mj/image/1717');
    expect(midjourneyView(row, 'alice', '').username).toBe('alice');
  });

  it('leaves out which channel key took the task', () => {
    expect(midjourneyView({ ...row, key_index: 1 })).not.toHaveProperty('key_index');
  });

  it('leaves a task without an image imageless', () => {
    expect(midjourneyView({ ...row, image_url: '' }, undefined, 'https://gw.example').image_url).toBe('');
  });
});

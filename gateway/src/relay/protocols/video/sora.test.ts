import { describe, expect, it } from 'vitest';
import { readSoraVideo, soraParams, soraRatios } from './sora.ts';

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
});

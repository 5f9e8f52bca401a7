import { describe, expect, it } from 'vitest';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { readFetchAnswer, readUpstreamTask, sunoTaskView } from './wire.ts';

describe('readUpstreamTask', () => {
  it('maps the proxy statuses, NOT_START as SUBMITTED, with a progress when none is given', () => {
    expect(readUpstreamTask({ task_id: 'u1', status: 'NOT_START' })).toEqual({
      id: 'u1',
      status: 'SUBMITTED',
      progress: '10%',
      failReason: '',
      data: null,
    });
    expect(readUpstreamTask({ task_id: 'u1', status: 'queued' })?.progress).toBe('20%');
    expect(readUpstreamTask({ task_id: 'u1', status: 'IN_PROGRESS', progress: '70%' })?.progress).toBe('70%');
    expect(readUpstreamTask({ task_id: 'u1', status: 'FAILURE', fail_reason: 'banned' })).toMatchObject({
      status: 'FAILURE',
      failReason: 'banned',
    });
  });

  it('leaves out entries without id and UNKNOWN statuses', () => {
    expect(readUpstreamTask({ status: 'SUCCESS' })).toBeUndefined();
    expect(readUpstreamTask({ task_id: 'u1', status: 'UNKNOWN' })).toBeUndefined();
    expect(readUpstreamTask('u1')).toBeUndefined();
  });
});

describe('readFetchAnswer', () => {
  it('reads the tasks of a {code: success, data: [...]} answer by upstream id', () => {
    const clips = [{ id: 'c1', audio_url: 'https://cdn/c1.mp3', title: 'Song' }];
    const tasks = readFetchAnswer(
      JSON.stringify({ code: 'success', message: '', data: [{ task_id: 'u1', status: 'SUCCESS', data: clips }] }),
    );
    expect([...tasks.keys()]).toEqual(['u1']);
    expect(tasks.get('u1')).toMatchObject({ status: 'SUCCESS', progress: '100%', data: clips });
  });

  it('throws on an error answer, so the channel is retried next poll', () => {
    expect(() => readFetchAnswer(JSON.stringify({ code: 'error', message: 'bad key', data: null }))).toThrow(
      'unexpected suno fetch answer',
    );
  });
});

describe('sunoTaskView', () => {
  it('shows the public id and the stored data', () => {
    const row = {
      task_id: 'task_abc',
      action: 'MUSIC',
      status: 'SUCCESS',
      fail_reason: '',
      submit_time: 10,
      start_time: 11,
      finish_time: 12,
      progress: '100%',
      data: '[{"id":"c1"}]',
    } as TaskRow;
    expect(sunoTaskView(row)).toEqual({
      task_id: 'task_abc',
      action: 'MUSIC',
      status: 'SUCCESS',
      fail_reason: '',
      submit_time: 10,
      start_time: 11,
      finish_time: 12,
      progress: '100%',
      data: [{ id: 'c1' }],
    });
  });
});

import { describe, expect, it } from 'vitest';
import { actionOfCustomId, clearMode, describeSubmission, MjRequestError, upstreamBody } from './actions.ts';

describe('Midjourney submissions', () => {
  it('names the action and the model of every submit path', () => {
    expect(describeSubmission('submit/imagine', {})).toEqual({ action: 'IMAGINE', model: 'mj_imagine' });
    expect(describeSubmission('insight-face/swap', {})).toEqual({ action: 'SWAP_FACE', model: 'swap_face' });
    expect(describeSubmission('submit/upload-discord-images', {})).toEqual({ action: 'UPLOAD', model: 'mj_upload' });
    expect(describeSubmission('submit/change', { action: 'upscale', taskId: '7', index: 1 })).toEqual({
      action: 'UPSCALE',
      model: 'mj_upscale',
      originalTaskId: '7',
    });
    expect(describeSubmission('submit/simple-change', { content: '1320 V3' })).toEqual({
      action: 'VARIATION',
      model: 'mj_variation',
      originalTaskId: '1320',
    });
    expect(describeSubmission('submit/modal', { taskId: '9', prompt: 'x' })).toMatchObject({
      action: 'MODAL',
      originalTaskId: '9',
    });
    expect(describeSubmission('submit/action', { taskId: '9', customId: 'MJ::JOB::upsample::2::abc' })).toEqual({
      action: 'UPSCALE',
      model: 'mj_upscale',
      originalTaskId: '9',
    });
  });

  it('refuses a follow-up without its task, or an action it does not know', () => {
    expect(() => describeSubmission('submit/action', { customId: 'MJ::JOB::upsample::1::a' })).toThrow(MjRequestError);
    expect(() => describeSubmission('submit/change', { action: 'DANCE', taskId: '1' })).toThrow('action_not_supported');
    expect(() => describeSubmission('submit/simple-change', { content: 'U1' })).toThrow('content_format_error');
  });

  it('reads the action from a button customId', () => {
    expect(actionOfCustomId('MJ::JOB::variation::1::h')).toBe('VARIATION');
    expect(actionOfCustomId('MJ::JOB::high_variation::1::h::SOLO')).toBe('HIGH_VARIATION');
    expect(actionOfCustomId('MJ::JOB::reroll::0::h::SOLO')).toBe('REROLL');
    expect(actionOfCustomId('MJ::Outpaint::50::1::h::SOLO')).toBe('ZOOM');
    expect(actionOfCustomId('MJ::CustomZoom::h')).toBe('CUSTOM_ZOOM');
    expect(actionOfCustomId('MJ::JOB::pan_left::1::h::SOLO')).toBe('PAN');
    expect(actionOfCustomId('MJ::Inpaint::1::h::SOLO')).toBe('INPAINT');
    expect(actionOfCustomId('something')).toBe('UNKNOWN');
  });

  it('clears the speed flags from a prompt, and nothing else', () => {
    expect(clearMode('a cat --fast --ar 16:9 --relax --turbo')).toBe('a cat --ar 16:9');
    expect(clearMode('fast cars --v 6')).toBe('fast cars --v 6');
  });
});

describe('the body a Midjourney upstream gets', () => {
  const body = {
    prompt: 'a fox --relax',
    notifyHook: 'https://client/hook',
    accountFilter: { instanceId: '7' },
    base64Array: [],
  };

  it('never carries the notifyHook, and keeps the rest as sent with both options off', () => {
    expect(upstreamBody(body, { keepAccountFilter: false, clearMode: false })).toEqual({
      prompt: 'a fox --relax',
      base64Array: [],
    });
  });

  it('keeps the accountFilter with MjAccountFilterEnabled and clears speed flags with MjModeClearEnabled', () => {
    expect(upstreamBody(body, { keepAccountFilter: true, clearMode: true })).toEqual({
      prompt: 'a fox',
      accountFilter: { instanceId: '7' },
      base64Array: [],
    });
  });
});

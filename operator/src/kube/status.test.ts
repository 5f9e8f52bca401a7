import { describe, expect, it } from 'vitest';
import { type Condition, kubeTime, mergeConditions, mergePatchOf, sameJson, unixToKubeTime } from './status.ts';

const ready = (status: 'True' | 'False', reason = 'Reconciled') => ({ type: 'Ready', status, reason, message: 'm' });

describe('mergeConditions', () => {
  it('stamps new conditions with the time and generation', () => {
    expect(mergeConditions(undefined, [ready('True')], 3, 'T1')).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: 'm',
        lastTransitionTime: 'T1',
        observedGeneration: 3,
      },
    ]);
  });

  it('keeps the transition time while the status holds, and moves it when it flips', () => {
    const first = mergeConditions(undefined, [ready('True')], 1, 'T1');
    const same = mergeConditions(first, [{ ...ready('True'), message: 'other' }], 2, 'T2');
    expect(same[0]).toMatchObject({ lastTransitionTime: 'T1', observedGeneration: 2, message: 'other' });
    const flipped = mergeConditions(same, [ready('False', 'SecretNotFound')], 2, 'T3');
    expect(flipped[0]).toMatchObject({ status: 'False', reason: 'SecretNotFound', lastTransitionTime: 'T3' });
  });

  it('keeps conditions of types it does not own', () => {
    const foreign: Condition = { type: 'Audited', status: 'True', reason: 'X', message: '', lastTransitionTime: 'T0' };
    expect(mergeConditions([foreign], [ready('True')], 1, 'T1').map((c) => c.type)).toEqual(['Ready', 'Audited']);
  });
});

describe('mergePatchOf', () => {
  it('answers nothing when nothing changed, whatever the key order', () => {
    expect(mergePatchOf({ a: 1, b: { x: 1, y: 2 } }, { b: { y: 2, x: 1 }, a: 1 })).toBeUndefined();
  });

  it('carries changed keys and nulls removed ones', () => {
    expect(mergePatchOf({ a: 1, b: 2, c: 3 }, { a: 1, b: 5, d: 4 })).toEqual({ b: 5, c: null, d: 4 });
    expect(mergePatchOf(undefined, { a: 1, skip: undefined })).toEqual({ a: 1 });
  });
});

describe('times', () => {
  it('formats RFC 3339 without fractions, and unix seconds with 0 as never', () => {
    expect(kubeTime(new Date('2025-01-02T03:04:05.678Z'))).toBe('2025-01-02T03:04:05Z');
    expect(unixToKubeTime(1_700_000_000)).toBe('2023-11-14T22:13:20Z');
    expect(unixToKubeTime(0)).toBeUndefined();
  });

  it('compares JSON structurally', () => {
    expect(sameJson([{ a: 1, b: 2 }], [{ b: 2, a: 1 }])).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });
});

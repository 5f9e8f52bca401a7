import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOLD_LIMIT, StreamText } from './stream-text.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const textOf = (json: unknown, event: string | undefined) =>
  `${event ?? ''}${(json as { t?: string } | undefined)?.t ?? '?'}`;

describe('StreamText', () => {
  it('reads held events only when asked, in stream order, and each once', () => {
    const text = new StreamText(textOf);
    const parse = vi.spyOn(JSON, 'parse');
    text.add('{"t":"a"}');
    text.add('not json');
    text.add('{"t":"c"}', 'e:');
    expect(parse).not.toHaveBeenCalled();
    expect(text.value).toBe('a?e:c');
    text.add('{"t":"d"}');
    expect(text.value).toBe('a?e:cd');
    expect(parse).toHaveBeenCalledTimes(4);
  });

  it('reads what it holds once the held data passes the limit, so a long stream holds text, not JSON', () => {
    const text = new StreamText(textOf);
    const parse = vi.spyOn(JSON, 'parse');
    const data = `{"t":"x","pad":"${'p'.repeat(1000)}"}`;
    const fit = Math.floor(HOLD_LIMIT / data.length);
    for (let i = 0; i < fit; i++) text.add(data);
    expect(parse).not.toHaveBeenCalled();
    text.add(data);
    expect(parse).toHaveBeenCalledTimes(fit + 1);
    expect(text.value).toBe('x'.repeat(fit + 1));
  });
});

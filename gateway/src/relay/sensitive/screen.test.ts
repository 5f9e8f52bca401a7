import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { waitFor } from '../../../../tests/support/wait.ts';
import { type ClusterState, createClusterState } from '../../cluster/index.ts';
import { OptionsService } from '../../domain/options/index.ts';
import { AppError } from '../../errors.ts';
import type { Store } from '../../store/index.ts';
import { SCAN_SLICE, WordMatcher } from './matcher.ts';
import { SensitiveWords } from './screen.ts';

// Two pods (options services on one database, cluster states on one Redis namespace): a word list
// changed on one must reach the other's matcher through the bus.
const redisUrl = inject('redisUrl');
let database: { store: Store; dispose(): Promise<void> };
const opened: Array<{ close(): Promise<void> }> = [];
let writer: OptionsService;
let reader: OptionsService;

beforeAll(async () => {
  database = await createTestStore();
  const namespace = `tollgate-sensitive-test-${randomUUID()}`;
  const pods: OptionsService[] = [];
  for (let i = 0; i < 2; i++) {
    const cluster: ClusterState = await createClusterState({ redisUrl, namespace });
    const options = await OptionsService.start({ db: database.store.db, bus: cluster.bus, syncIntervalMs: 60_000 });
    opened.push(cluster, options);
    pods.push(options);
  }
  [writer, reader] = pods as [OptionsService, OptionsService];
}, 60_000);

afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
  await database?.dispose();
});

beforeEach(async () => {
  await writer.setMany({
    CheckSensitiveEnabled: 'true',
    CheckSensitiveOnPromptEnabled: 'true',
    StopOnSensitiveEnabled: 'true',
    SensitiveWords: 'test_sensitive',
  });
  await waitFor(() => reader.get('SensitiveWords') === 'test_sensitive' && reader.getBoolean('StopOnSensitiveEnabled'));
});

const screens: SensitiveWords[] = [];
afterEach(() => {
  for (const screen of screens.splice(0)) screen.close();
});

/** A screen following `options`, closed after the test so that it builds no matcher in the next. */
function follow(options: OptionsService): SensitiveWords {
  const screen = new SensitiveWords(options);
  screens.push(screen);
  return screen;
}

const chat = (text: string) => ({ model: 'm', messages: [{ role: 'user', content: text }] });

async function refusal(screen: () => Promise<unknown>): Promise<AppError> {
  try {
    await screen();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('SensitiveWords', () => {
  it('refuses a prompt with listed words, naming them, when StopOnSensitiveEnabled is on', async () => {
    const words = follow(writer);
    const error = await refusal(() => words.screen('openai-chat', chat('a TEST_SENSITIVE prompt')));
    expect(error.code).toBe('sensitive_words_detected');
    expect(error.status).toBe(400);
    expect(error.localized('en')).toBe('The prompt contains sensitive words: test_sensitive');
    expect(error.localized('zh')).toBe('提示词包含敏感词：test_sensitive');
    const clean = chat('a clean prompt');
    await words.screen('openai-chat', clean);
    expect(clean).toEqual(chat('a clean prompt'));
  });

  it('stars the words in the body when StopOnSensitiveEnabled is off', async () => {
    await writer.set('StopOnSensitiveEnabled', 'false');
    const body = chat('say test_sensitive twice: Test_Sensitive');
    await follow(writer).screen('openai-chat', body);
    expect(body).toEqual(chat('say ************** twice: **************'));
  });

  it('does nothing when the master switch or the prompt switch is off', async () => {
    const words = follow(writer);
    for (const off of ['CheckSensitiveEnabled', 'CheckSensitiveOnPromptEnabled']) {
      await writer.setMany({ CheckSensitiveEnabled: 'true', CheckSensitiveOnPromptEnabled: 'true', [off]: 'false' });
      for (const stop of ['true', 'false']) {
        await writer.set('StopOnSensitiveEnabled', stop);
        const body = chat('test_sensitive');
        await words.screen('openai-chat', body);
        expect(body).toEqual(chat('test_sensitive'));
      }
    }
  });

  it('builds its matcher once per change of the list, on every pod', async () => {
    const build = vi.spyOn(WordMatcher, 'of');
    try {
      const words = follow(reader);
      expect(build).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 5; i++) await words.screen('openai-chat', chat('nothing here'));
      expect(build).toHaveBeenCalledTimes(1);

      await writer.set('SensitiveWords', '\nforbidden\n\n禁止词\n');
      await waitFor(() => build.mock.calls.length === 2);
      expect(
        (await refusal(() => words.screen('claude-messages', { messages: [{ role: 'user', content: '这是禁止词' }] })))
          .message,
      ).toContain('禁止词');
      expect(
        (await refusal(() => words.screen('gemini-generate', { contents: [{ parts: [{ text: 'FORBIDDEN' }] }] })))
          .message,
      ).toContain('forbidden');
      // The old word is no longer listed.
      await words.screen('openai-chat', chat('test_sensitive'));
      expect(build).toHaveBeenCalledTimes(2);
    } finally {
      build.mockRestore();
    }
  });

  it('screens Realtime frames: refuses, stars (re-serialised), or passes the frame itself', async () => {
    const words = follow(writer);
    const frame = (event: object) => Buffer.from(JSON.stringify(event));
    const item = (text: string) => ({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
    });
    const refused = words.screenFrame(frame(item('say test_sensitive')));
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('sensitive_words_detected');
    const clean = frame(item('hello'));
    expect(words.screenFrame(clean)).toBe(clean);
    // Audio chunks, frames that are not JSON, and words outside a text field pass as they are.
    for (const other of [
      frame({ type: 'input_audio_buffer.append', audio: 'test_sensitive' }),
      Buffer.from('not json "text"'),
      frame({ type: 'session.update', session: { voice: 'test_sensitive' } }),
    ]) {
      expect(words.screenFrame(other)).toBe(other);
    }
    await writer.set('StopOnSensitiveEnabled', 'false');
    const masked = words.screenFrame(frame(item('say TEST_SENSITIVE')));
    expect(JSON.parse(String(masked))).toEqual(item('say **************'));
    // Too deep to re-serialise once masked: refused before it is parsed.
    const deep = Buffer.from(`{"type":"x","text":"test_sensitive","deep":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    expect((words.screenFrame(deep) as AppError).code).toBe('body_too_deep');
  });

  it('lets everything through with an empty list', async () => {
    await writer.set('SensitiveWords', '');
    await waitFor(() => reader.get('SensitiveWords') === '');
    const words = follow(reader);
    const body = chat('test_sensitive');
    await words.screen('openai-chat', body);
    expect(body).toEqual(chat('test_sensitive'));
  });
});

describe('SensitiveWords on huge prompts', () => {
  it('finds and stars words across slice boundaries, with the event loop running between slices', async () => {
    const words = follow(writer);
    // The word straddles the first slice boundary; another ends the megabyte.
    const start = SCAN_SLICE - 5;
    const text = `${'x'.repeat(start)}test_sensitive${'y'.repeat(1_000_000)}TEST_SENSITIVE`;
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      const error = await refusal(() => words.screen('openai-chat', chat(text)));
      expect(error.code).toBe('sensitive_words_detected');
      expect(turns).toBeGreaterThan(0);

      await writer.set('StopOnSensitiveEnabled', 'false');
      const body = chat(text);
      turns = 0;
      expect(await words.screen('openai-chat', body)).toBe(true);
      expect(turns).toBeGreaterThan(0);
      expect(body).toEqual(chat(`${'x'.repeat(start)}${'*'.repeat(14)}${'y'.repeat(1_000_000)}${'*'.repeat(14)}`));
      const clean = chat('z'.repeat(1_000_000));
      expect(await words.screen('openai-chat', clean)).toBe(false);
      expect(clean).toEqual(chat('z'.repeat(1_000_000)));
    } finally {
      clearInterval(ticking);
    }
  });
});

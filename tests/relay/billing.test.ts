import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type SmtpInbox, startSmtpInbox } from '../support/smtp.ts';
import { billed as billedBy } from '../support/usage.ts';
import { eventually, waitFor } from '../support/wait.ts';

// Each test works the expected quota out by the formula of reference §5.3–5.4 and compares it, to the
// unit, with the consume log the relay wrote. QuotaPerUnit is 500,000; the default group's ratio is
// 0.8 so that a bill that forgets it cannot pass.
const QPU = 500_000;
const GROUP = 0.8;

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
let smtp: SmtpInbox;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  smtp = await startSmtpInbox();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const models = [
    'gpt-4o',
    'gpt-4o-mini',
    'gpt-4o-audio-preview',
    'fixed-price-model',
    'free-model',
    'dall-e-3',
    'tts-1',
    'whisper-1',
  ];
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: models.join(','),
    group: 'default',
  });
  expect(channel.body.success).toBe(true);
  await gateway.options.setMany({
    GroupRatio: JSON.stringify({ default: GROUP }),
    ModelRatio: JSON.stringify({
      'gpt-4o': 1.25,
      'gpt-4o-mini': 0.075,
      'gpt-4o-audio-preview': 1.25,
      'free-model': 0,
      'tts-1': 7.5,
      'whisper-1': 15,
    }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4, 'gpt-4o-audio-preview': 4 }),
    CacheRatio: JSON.stringify({ 'gpt-4o': 0.5 }),
    AudioRatio: JSON.stringify({ 'gpt-4o-audio-preview': 16 }),
    AudioCompletionRatio: JSON.stringify({ 'gpt-4o-audio-preview': 2 }),
    ModelPrice: JSON.stringify({ 'fixed-price-model': 0.02, 'dall-e-3': 0.04 }),
    ...smtp.options,
  });
  const token = await root.post('/api/token/', { name: 'billing', unlimited_quota: true });
  client = new OpenAI({ apiKey: token.body.data.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await client.models.list()).data.length,
    (n) => n === models.length,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
  await smtp?.close();
});

/** Runs `call` and answers its consume log. */
const billed = (call: () => Promise<unknown>) => billedBy(gateway, call);

/** A WAV file of `seconds` of silence (8 kHz, 8-bit mono PCM): its header states its length. */
function silentWav(seconds: number): Buffer {
  const rate = 8000;
  const data = rate * seconds;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate, 28); // bytes per second
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data, 128)]);
}

describe('billing through the relay, per mode, to the unit', () => {
  it('bills cached prompt tokens at the cache ratio', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 1000, cached_tokens: 600, completion_tokens: 200 } };
    const log = await billed(() =>
      client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    );
    // ((1000 − 600) + 600 × 0.5 + 200 × 4) × 1.25 × 0.8
    expect(log.quota).toBe(Math.round((400 + 600 * 0.5 + 200 * 4) * 1.25 * GROUP));
    expect(log).toMatchObject({ prompt_tokens: 1000, completion_tokens: 200 });
    expect(log.other).toMatchObject({ cache_tokens: 600, cache_ratio: 0.5, group_ratio: GROUP, model_ratio: 1.25 });
  });

  it('bills audio tokens at the audio ratios', async () => {
    upstream.behaviour = {
      usage: { prompt_tokens: 1000, audio_input_tokens: 600, completion_tokens: 500, audio_output_tokens: 300 },
    };
    const log = await billed(() =>
      client.chat.completions.create({ model: 'gpt-4o-audio-preview', messages: [{ role: 'user', content: 'hi' }] }),
    );
    // text in 400 + audio in 600 × 16; text out 200 × 4 + audio out 300 × 16 × 2; × 1.25 × 0.8
    const expected = (400 + 600 * 16 + 200 * 4 + 300 * 16 * 2) * 1.25 * GROUP;
    expect(log.quota).toBe(Math.round(expected));
    expect(log.other).toMatchObject({
      audio: true,
      audio_input: 600,
      audio_output: 300,
      text_input: 400,
      text_output: 200,
      audio_ratio: 16,
      audio_completion_ratio: 2,
    });
  });

  it('bills a fixed per-call price × QuotaPerUnit × group ratio', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 5000, completion_tokens: 5000 } };
    const log = await billed(() =>
      client.chat.completions.create({ model: 'fixed-price-model', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(log.quota).toBe(Math.round(0.02 * QPU * GROUP));
    expect(log.other).toMatchObject({ model_price: 0.02 });
  });

  it('bills images per image, with the DALL·E size and quality multipliers', async () => {
    upstream.behaviour = {};
    const log = await billed(() =>
      client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 1, size: '1792x1024', quality: 'hd' }),
    );
    // $0.04 × 1 image (DALL·E 3 makes one at a time) × size 2 (1792 wide) × quality 1.5 (hd at 1792) × QuotaPerUnit × group
    expect(log.quota).toBe(Math.round(0.04 * 1 * 2 * 1.5 * QPU * GROUP));
    expect(log.content).not.toContain('估算');
  });

  it('bills speech by the tokens of the input text', async () => {
    upstream.behaviour = {};
    const input = 'The quick brown fox jumps over the lazy dog, twice.';
    const log = await billed(async () => {
      const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input });
      expect(Buffer.from(await speech.arrayBuffer()).length).toBeGreaterThan(0);
    });
    // tts-1 counts with cl100k_base
    expect(log.prompt_tokens).toBe(countTokens(input));
    expect(log.quota).toBe(Math.round(countTokens(input) * 7.5 * GROUP));
  });

  it('bills transcriptions by started minute: probed from the file, or as the upstream reports', async () => {
    upstream.behaviour = {};
    const wav = await toFile(silentWav(61), 'speech.wav', { type: 'audio/wav' });
    const probed = await billed(() =>
      client.audio.transcriptions.create({
        model: 'whisper-1',
        file: wav,
        response_format: 'text',
      }),
    );
    // 61 s → 2 started minutes × 1000 tokens × 15 × 0.8
    expect(probed.prompt_tokens).toBe(2000);
    expect(probed.quota).toBe(Math.round(2000 * 15 * GROUP));

    upstream.behaviour = { transcriptionSeconds: 30 };
    const reported = await billed(() =>
      client.audio.transcriptions.create({
        model: 'whisper-1',
        file: wav,
      }),
    );
    // The upstream said 30 s: 1 minute.
    expect(reported.prompt_tokens).toBe(1000);
    expect(reported.quota).toBe(Math.round(1000 * 15 * GROUP));
  });

  it('adds the web search surcharge of a Responses call', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 1000, completion_tokens: 100 }, webSearchCalls: 2 };
    const log = await billed(() =>
      client.responses.create({ model: 'gpt-4o-mini', input: 'news?', tools: [{ type: 'web_search_preview' }] }),
    );
    // tokens (1000 + 100) × 0.075 × 0.8 = 66; web_search_preview for gpt-4o* is $25 / 1,000 calls
    const expected = (1000 + 100) * 0.075 * GROUP + (2 / 1000) * 25 * GROUP * QPU;
    expect(log.quota).toBe(Math.round(expected));
    expect(log.other).toMatchObject({ web_search: true, web_search_call_count: 2, web_search_price: 25 });
  });

  it('bills a stream without usage from the local count, and says so', async () => {
    upstream.behaviour = { omitUsage: true, reply: 'An answer counted by the gateway itself.' };
    const log = await billed(async () => {
      const stream = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'count me' }],
        stream: true,
      });
      for await (const _ of stream);
    });
    expect(log.prompt_tokens).toBeGreaterThan(0);
    expect(log.completion_tokens).toBeGreaterThan(0);
    expect(log.other.admin_info).toMatchObject({ local_count_tokens: true });
    expect(log.quota).toBe(Math.round((log.prompt_tokens + log.completion_tokens * 4) * 1.25 * GROUP));
  });
});

describe('funding rules', () => {
  /** A normal user with `quota` in the wallet and an unlimited token, signed in. */
  async function walletUser(name: string, quota: number) {
    const user = new DashboardClient(gateway.url);
    expect((await user.post('/api/user/register', { username: name, password: 'password-1' })).body.success).toBe(true);
    await user.login(name, 'password-1');
    expect((await root.put('/api/user/', { id: user.userId, username: name, quota })).body.success).toBe(true);
    const token = await user.post('/api/token/', { name: 'wallet', unlimited_quota: true });
    const openai = new OpenAI({ apiKey: token.body.data.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    return { user, openai };
  }

  it('lets an empty wallet use a free model only when free models skip the reservation', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 10, completion_tokens: 10 } };
    const { openai } = await walletUser('broke', 0);
    const ask = () =>
      openai.chat.completions.create({ model: 'free-model', messages: [{ role: 'user', content: 'hi' }] });
    await expect(ask()).rejects.toMatchObject({ status: 403 });
    await gateway.options.set('quota_setting.enable_free_model_pre_consume', 'false');
    try {
      const log = await billed(ask);
      expect(log.quota).toBe(0);
    } finally {
      await gateway.options.set('quota_setting.enable_free_model_pre_consume', 'true');
    }
    // A priced model still needs a wallet.
    await expect(
      openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 403 });
  });

  it('skips the reservation for a caller holding more than the trust quota ($10)', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 10, completion_tokens: 10 } };
    // max_tokens 50M would reserve (50M + prompt) × 1.25 × 0.8 > 40M quota: more than either wallet.
    const big = { model: 'gpt-4o', max_tokens: 50_000_000, messages: [{ role: 'user' as const, content: 'hi' }] };
    const trusted = await walletUser('trusted', 12 * QPU);
    const log = await billed(() => trusted.openai.chat.completions.create(big));
    expect(log.quota).toBe(Math.round((10 + 10 * 4) * 1.25 * GROUP));
    const modest = await walletUser('modest', 8 * QPU);
    await expect(modest.openai.chat.completions.create(big)).rejects.toMatchObject({ status: 403 });
  });

  it('mails the user once when a charge takes the wallet below their threshold', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 1000, completion_tokens: 0 } };
    // Each call costs 1000 × 1.25 × 0.8 = 1000; the wallet starts 1500 above the threshold.
    const threshold = 100_000;
    const { user, openai } = await walletUser('thrifty', threshold + 1500);
    const setting = await user.put('/api/user/setting', {
      notify_type: 'email',
      quota_warning_threshold: threshold,
      notification_email: 'thrifty@example.test',
    });
    expect(setting.body.success).toBe(true);
    const mails = () => smtp.inbox.filter((m) => m.to.includes('thrifty@example.test'));
    const ask = () =>
      billed(() => openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect((await ask()).quota).toBe(1000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mails()).toHaveLength(0);
    await ask(); // 500 below the threshold now
    await waitFor(() => mails().length === 1, 5000);
    expect(mails()[0]?.body).toContain(String(threshold - 500));
    await ask(); // already below: no second mail
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mails()).toHaveLength(1);
  });
});

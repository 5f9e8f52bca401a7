import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { MOCK_SPEECH_AUDIO, type MockMinimax, startMockMinimax } from '../support/mock-minimax.ts';
import { type MockTencent, startMockTencent } from '../support/mock-tencent.ts';
import { type MockXunfei, startMockXunfei } from '../support/mock-xunfei.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// One gateway with a channel of each protocol (and one with a wrong secret each): Tencent Hunyuan
// (TC3-signed, type 23), Xunfei Spark (signed WebSocket, type 18) and MiniMax (type 35). The official
// clients get each upstream's text; the charge is the formula applied to the upstream's own usage.
const REPLY = 'Sunny in Paris, 24 degrees.';
const RATIO = { 'hunyuan-turbo': 0.8, 'SparkDesk-v3.5': 1.5, 'MiniMax-Text-01': 0.2, 'speech-02-hd': 25 };
const COMPLETION = { 'hunyuan-turbo': 3, 'SparkDesk-v3.5': 2, 'MiniMax-Text-01': 8 };
const quotaOf = (model: keyof typeof COMPLETION, prompt: number, completion: number) =>
  Math.round((prompt + completion * COMPLETION[model]) * RATIO[model]);

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let tencent: MockTencent;
let xunfei: MockXunfei;
let minimax: MockMinimax;
let openai: OpenAI;
let claude: Anthropic;
let key: string;
const channelIds: Record<string, number> = {};

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

beforeAll(async () => {
  [tencent, xunfei, minimax] = await Promise.all([
    startMockTencent({ AKIDgood: 'tencent-secret' }),
    startMockXunfei({ 'spark-api-key': { appId: 'app0001', apiSecret: 'spark-secret' } }),
    startMockMinimax('mm-key'),
  ]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channels: Array<[string, number, string, string, string, string?]> = [
    ['tencent', 23, '1300000001|AKIDgood|tencent-secret', tencent.url, 'hunyuan-turbo'],
    ['tencent-bad', 23, '1300000001|AKIDgood|wrong-secret', tencent.url, 'hunyuan-lite'],
    ['xunfei', 18, 'app0001|spark-secret|spark-api-key', xunfei.url, 'SparkDesk-v3.5', 'v3.5'],
    ['xunfei-bad', 18, 'app0001|wrong-secret|spark-api-key', xunfei.url, 'SparkDesk-v4.0', 'v4.0'],
    ['minimax', 35, 'mm-key', minimax.url, 'MiniMax-Text-01,speech-02-hd'],
    ['minimax-bad', 35, 'mm-wrong', minimax.url, 'abab6.5s-chat'],
  ];
  for (const [name, type, key, baseUrl, models, other] of channels) {
    const created = await root.post('/api/channel/', {
      name,
      type,
      key,
      base_url: baseUrl,
      models,
      group: 'default',
      ...(other ? { other } : {}),
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    channelIds[name] = created.body.data.id;
  }
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ ...RATIO, 'hunyuan-lite': 1, 'SparkDesk-v4.0': 1, 'abab6.5s-chat': 1 }),
    CompletionRatio: JSON.stringify(COMPLETION),
  });
  key = (await root.post('/api/token/', { name: 'cn1', unlimited_quota: true })).body.data.key;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === 7,
    3000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([tencent?.close(), xunfei?.close(), minimax?.close()]);
});

async function chat(model: string) {
  const answer = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }] });
  return answer.choices[0]?.message.content;
}

async function streamed(model: string) {
  const stream = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Weather?' }],
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

async function toolCall(model: string) {
  const answer = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [weather],
  });
  const call = answer.choices[0]?.message.tool_calls?.[0];
  if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(answer)}`);
  return {
    finish: answer.choices[0]?.finish_reason,
    name: call.function.name,
    args: JSON.parse(call.function.arguments),
  };
}

describe('Tencent Hunyuan (23)', () => {
  it('answers the openai client plain and streamed, signed with TC3, billed by the upstream usage', async () => {
    tencent.behaviour = { reply: REPLY, usage: { PromptTokens: 40, CompletionTokens: 12 } };
    let text: string | null | undefined;
    const plain = await billed(gateway, async () => {
      text = await chat('hunyuan-turbo');
    });
    expect(text).toBe(REPLY);
    expect(plain.quota).toBe(quotaOf('hunyuan-turbo', 40, 12));
    expect(tencent.requests.at(-1)?.body).toMatchObject({
      Model: 'hunyuan-turbo',
      Stream: false,
      Messages: [{ Role: 'user', Content: 'Weather?' }],
    });
    expect(tencent.requests.at(-1)?.headers).toMatchObject({
      'x-tc-action': 'ChatCompletions',
      'x-tc-version': '2023-09-01',
    });
    expect(plain.other.request_conversion).toEqual(['OpenAI Compatible', 'tencent-chat']);

    const stream = await billed(gateway, async () => {
      text = await streamed('hunyuan-turbo');
    });
    expect(text).toBe(REPLY);
    expect(stream.quota).toBe(quotaOf('hunyuan-turbo', 40, 12));
    expect(stream.completion_tokens).toBe(12);
  });

  it('carries tools both ways (parameters as a JSON string upstream)', async () => {
    tencent.behaviour = { usage: { PromptTokens: 60, CompletionTokens: 9 } };
    let call: Awaited<ReturnType<typeof toolCall>> | undefined;
    const log = await billed(gateway, async () => {
      call = await toolCall('hunyuan-turbo');
    });
    expect(call).toEqual({ finish: 'tool_calls', name: 'get_weather', args: { city: 'Paris' } });
    expect(JSON.parse(tencent.requests.at(-1)?.body.Tools[0].Function.Parameters)).toEqual(weather.function.parameters);
    expect(log.quota).toBe(quotaOf('hunyuan-turbo', 60, 9));
  });

  it('answers the Claude client, plain and streamed, billed by the same formula', async () => {
    tencent.behaviour = { reply: REPLY, usage: { PromptTokens: 30, CompletionTokens: 8 } };
    let text = '';
    const plain = await billed(gateway, async () => {
      const message = await claude.messages.create({
        model: 'hunyuan-turbo',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    });
    expect(text).toBe(REPLY);
    expect(plain.quota).toBe(quotaOf('hunyuan-turbo', 30, 8));
    const stream = await billed(gateway, async () => {
      const final = await claude.messages
        .stream({ model: 'hunyuan-turbo', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
        .finalMessage();
      text = final.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 8 });
    });
    expect(text).toBe(REPLY);
    expect(stream.quota).toBe(quotaOf('hunyuan-turbo', 30, 8));
  });

  it('answers the Gemini client', async () => {
    tencent.behaviour = { reply: REPLY, usage: { PromptTokens: 22, CompletionTokens: 6 } };
    let text: string | undefined;
    const log = await billed(gateway, async () => {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      text = (await ai.models.generateContent({ model: 'hunyuan-turbo', contents: 'Weather?' })).text;
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(quotaOf('hunyuan-turbo', 22, 6));
  });

  it('turns a signature refusal (HTTP 200 with Response.Error) into a clear 401', async () => {
    const error = await chat('hunyuan-lite').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('AuthFailure.SignatureFailure');
  });

  it('passes the channel test', async () => {
    tencent.behaviour = {};
    // A test leaves a log that costs nobody.
    let answer: Awaited<ReturnType<DashboardClient['get']>> | undefined;
    const log = await billed(gateway, async () => {
      answer = await root.get(`/api/channel/test/${channelIds.tencent}`);
    });
    expect(answer?.body).toMatchObject({ success: true, message: '' });
    expect([log.quota, log.prompt_tokens]).toEqual([0, 12]);
    const bad = await root.get(`/api/channel/test/${channelIds['tencent-bad']}`);
    expect(bad.body).toMatchObject({ success: false, error_code: 'AuthFailure.SignatureFailure' });
  });
});

describe('Xunfei Spark (18)', () => {
  it('answers the openai client plain and streamed over the signed WebSocket, billed by the last frame', async () => {
    xunfei.behaviour = { reply: REPLY, usage: { prompt_tokens: 25, completion_tokens: 14 } };
    let text: string | null | undefined;
    const plain = await billed(gateway, async () => {
      text = await chat('SparkDesk-v3.5');
    });
    expect(text).toBe(REPLY);
    expect(plain.quota).toBe(quotaOf('SparkDesk-v3.5', 25, 14));
    expect(xunfei.frames.at(-1)).toMatchObject({
      path: '/v3.5/chat',
      frame: {
        header: { app_id: 'app0001' },
        parameter: { chat: { domain: 'generalv3.5' } },
        payload: { message: { text: [{ role: 'user', content: 'Weather?' }] } },
      },
    });
    const stream = await billed(gateway, async () => {
      text = await streamed('SparkDesk-v3.5');
    });
    expect(text).toBe(REPLY);
    expect(stream.quota).toBe(quotaOf('SparkDesk-v3.5', 25, 14));
  });

  it('offers tools as Spark functions and answers the call', async () => {
    xunfei.behaviour = { usage: { prompt_tokens: 50, completion_tokens: 10 } };
    let call: Awaited<ReturnType<typeof toolCall>> | undefined;
    const log = await billed(gateway, async () => {
      call = await toolCall('SparkDesk-v3.5');
    });
    expect(call).toEqual({ finish: 'tool_calls', name: 'get_weather', args: { city: 'Paris' } });
    expect(xunfei.frames.at(-1)?.frame.payload.functions.text[0]).toMatchObject({ name: 'get_weather' });
    expect(log.quota).toBe(quotaOf('SparkDesk-v3.5', 50, 10));
  });

  it('answers the Claude client streamed', async () => {
    xunfei.behaviour = { reply: REPLY, usage: { prompt_tokens: 20, completion_tokens: 7 } };
    let text = '';
    const log = await billed(gateway, async () => {
      const final = await claude.messages
        .stream({ model: 'SparkDesk-v3.5', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
        .finalMessage();
      text = final.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(quotaOf('SparkDesk-v3.5', 20, 7));
  });

  it('says why the upstream refused: an error frame, a bad signature at the upgrade', async () => {
    const refused = await openai.chat.completions
      .create({ model: 'SparkDesk-v3.5', messages: [{ role: 'user', content: 'say FORBIDDEN things' }] })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((refused as InstanceType<typeof OpenAI.APIError>).message).toContain('Spark 10013');

    const unsigned = await chat('SparkDesk-v4.0').catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(unsigned).toBeInstanceOf(OpenAI.APIError);
    expect((unsigned as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((unsigned as InstanceType<typeof OpenAI.APIError>).message).toContain('HMAC signature does not match');
  });

  it('passes the channel test', async () => {
    xunfei.behaviour = {};
    for (const query of ['', '?stream=true']) {
      let answer: Awaited<ReturnType<DashboardClient['get']>> | undefined;
      const log = await billed(gateway, async () => {
        answer = await root.get(`/api/channel/test/${channelIds.xunfei}${query}`);
      });
      expect(answer?.body).toMatchObject({ success: true, message: '' });
      expect([log.quota, log.prompt_tokens, log.completion_tokens]).toEqual([0, 9, 6]);
    }
  });
});

describe('MiniMax (35)', () => {
  it('answers the openai client plain, streamed and with tools, billed by the upstream usage', async () => {
    minimax.behaviour = { reply: REPLY, usage: { prompt_tokens: 33, completion_tokens: 11 } };
    let text: string | null | undefined;
    const plain = await billed(gateway, async () => {
      text = await chat('MiniMax-Text-01');
    });
    expect(text).toBe(REPLY);
    expect(plain.quota).toBe(quotaOf('MiniMax-Text-01', 33, 11));
    expect(minimax.requests.at(-1)?.path).toBe('/v1/text/chatcompletion_v2');

    const stream = await billed(gateway, async () => {
      text = await streamed('MiniMax-Text-01');
    });
    // The last chunk's repeat of the whole message is not read twice.
    expect(text).toBe(REPLY);
    expect(stream.quota).toBe(quotaOf('MiniMax-Text-01', 33, 11));

    // The SDK's stream helper reads every chunk's delta: it must find one in the last chunk too.
    await billed(gateway, async () => {
      const runner = openai.chat.completions.stream({
        model: 'MiniMax-Text-01',
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      expect((await runner.finalChatCompletion()).choices[0]?.message.content).toBe(REPLY);
    });

    let call: Awaited<ReturnType<typeof toolCall>> | undefined;
    const tools = await billed(gateway, async () => {
      call = await toolCall('MiniMax-Text-01');
    });
    expect(call).toEqual({ finish: 'tool_calls', name: 'get_weather', args: { city: 'Paris' } });
    expect(tools.quota).toBe(quotaOf('MiniMax-Text-01', 33, 11));
  });

  it('speaks t2a_v2 for the OpenAI speech client: binary audio, billed as speech is', async () => {
    const input = 'Bonjour, il fait beau à Paris.';
    let audio = Buffer.alloc(0);
    const log = await billed(gateway, async () => {
      const speech = await openai.audio.speech.create({
        model: 'speech-02-hd',
        voice: 'male-qn-qingse' as 'alloy',
        input,
      });
      audio = Buffer.from(await speech.arrayBuffer());
    });
    expect(audio.equals(MOCK_SPEECH_AUDIO)).toBe(true);
    expect(minimax.requests.at(-1)).toMatchObject({
      path: '/v1/t2a_v2',
      body: {
        model: 'speech-02-hd',
        text: input,
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format: 'mp3' },
      },
    });
    expect(log.prompt_tokens).toBeGreaterThan(0);
    expect(log.quota).toBe(Math.round(log.prompt_tokens * RATIO['speech-02-hd']));
  });

  it('turns base_resp failures sent with HTTP 200 into clear errors', async () => {
    const error = await chat('abab6.5s-chat').catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('MiniMax 1004');

    const voice = await openai.audio.speech
      .create({ model: 'speech-02-hd', voice: 'alloy', input: 'hi' })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect((voice as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((voice as InstanceType<typeof OpenAI.APIError>).message).toContain('voice id not exist');
  });

  it('passes the channel test', async () => {
    minimax.behaviour = {};
    let answer: Awaited<ReturnType<DashboardClient['get']>> | undefined;
    const log = await billed(gateway, async () => {
      answer = await root.get(`/api/channel/test/${channelIds.minimax}?model=MiniMax-Text-01`);
    });
    expect(answer?.body).toMatchObject({ success: true, message: '' });
    expect([log.quota, log.prompt_tokens, log.completion_tokens]).toEqual([0, 11, 5]);
  });
});

describe('composite keys', () => {
  it('refuses a key missing a part when the channel is saved, naming the expected format', async () => {
    const created = await root.post('/api/channel/', {
      name: 'tencent-short',
      type: 23,
      key: 'AKIDgood|tencent-secret',
      base_url: tencent.url,
      models: 'hunyuan-standard',
      group: 'default',
    });
    expect(created.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(created.body.message).toContain('AppId|SecretId|SecretKey');
  });
});

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Transport, UpstreamResponse } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { minimaxErrorStatus } from './errors.ts';
import { minimaxProvider } from './index.ts';
import { MinimaxStreamDecoder } from './stream.ts';

const context = (upstreamModel: string) => ({
  channel: { type: 35 } as ChannelSnapshot,
  model: upstreamModel,
  upstreamModel,
  stream: false,
  options: undefined as never,
  clientHeaders: {},
});

/** A transport that answers every request with this JSON, recording what was sent. */
function answering(body: unknown, sent: string[] = []): Transport {
  return {
    send: async (request: { url: string }) => {
      sent.push(request.url);
      const bytes = Buffer.from(JSON.stringify(body));
      const stream = Readable.from([bytes]) as unknown as UpstreamResponse['body'];
      Object.assign(stream, { text: async () => bytes.toString() });
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: stream };
    },
  } as unknown as Transport;
}

const send = (url: string, transport: Transport) =>
  minimaxProvider.send!(
    { url, method: 'POST', headers: {}, body: '{}' },
    { transport, signal: new AbortController().signal, stream: false },
  );

describe('MiniMax', () => {
  it('speaks chatcompletion_v2 for chat and t2a_v2 for speech', () => {
    const build = (format: 'openai-chat' | 'openai-audio-speech') =>
      minimaxProvider.buildRequest({
        format,
        channel: { type: 35, baseUrl: '' } as ChannelSnapshot,
        key: 'mm',
        upstreamModel: 'm',
        body: '{}',
        stream: false,
        options: undefined as never,
        clientHeaders: {},
      });
    expect(build('openai-chat')).toMatchObject({
      url: 'https://api.minimax.chat/v1/text/chatcompletion_v2',
      headers: { authorization: 'Bearer mm' },
    });
    expect(build('openai-audio-speech').url).toBe('https://api.minimax.chat/v1/t2a_v2');
    expect(
      minimaxProvider.prepareBody(
        'openai-audio-speech',
        { model: 'tts', input: 'Hi', voice: 'female-shaonv', response_format: 'opus', speed: 3 },
        context('speech-02-hd'),
      ).body,
    ).toEqual({
      model: 'speech-02-hd',
      text: 'Hi',
      stream: false,
      voice_setting: { voice_id: 'female-shaonv', speed: 2 },
      audio_setting: { format: 'mp3' },
    });
  });

  it('answers speech as the decoded audio bytes', async () => {
    const response = await send(
      'https://mm/v1/t2a_v2',
      answering({
        data: { audio: '494433ff', status: 2 },
        extra_info: { audio_format: 'wav' },
        base_resp: { status_code: 0, status_msg: 'success' },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('audio/wav');
    expect(Buffer.from(await response.body.arrayBuffer())).toEqual(Buffer.from([0x49, 0x44, 0x33, 0xff]));
  });

  it('gives a base_resp failure sent with HTTP 200 the status its code deserves', async () => {
    const response = await send(
      'https://mm/v1/text/chatcompletion_v2',
      answering({ base_resp: { status_code: 1002, status_msg: 'rate limit' } }),
    );
    expect(response.status).toBe(429);
    expect(minimaxProvider.parseError(response.status, await response.body.text())).toEqual({
      status: 429,
      message: 'MiniMax 1002: rate limit',
      type: 'upstream_error',
      code: '1002',
    });
    const ok = await send(
      'https://mm/v1/text/chatcompletion_v2',
      answering({ choices: [], base_resp: { status_code: 0, status_msg: '' } }),
    );
    expect(ok.status).toBe(200);
    expect(minimaxProvider.parseError(400, '{"error":{"message":"bad","type":"invalid"}}')).toMatchObject({
      message: 'bad',
    });
    expect([1004, 2049, 1008, 1026, 2013, 1000].map(minimaxErrorStatus)).toEqual([401, 401, 403, 400, 400, 502]);
  });

  it("decodes the stream split anywhere, its last chunk's whole-message repeat made an empty delta", () => {
    const raw = Buffer.from(
      [
        'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"你好"}}],"usage":null}',
        'data: {"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"你好"}}],"usage":{"total_tokens":12,"prompt_tokens":9,"completion_tokens":3}}',
        '',
      ].join('\n\n'),
    );
    const decoder = new MinimaxStreamDecoder();
    const observer = minimaxProvider.streamObserver('openai-chat');
    const events = [];
    for (let at = 0; at < raw.length; at += 5) events.push(...decoder.push(raw.subarray(at, at + 5)));
    events.push(...decoder.end());
    for (const event of events) observer.observe(event);
    const last = JSON.parse(events.at(-1)!.data);
    expect(last.choices).toEqual([{ finish_reason: 'stop', index: 0, delta: {} }]);
    expect([observer.text, observer.usage]).toEqual(['你好', { promptTokens: 9, completionTokens: 3 }]);
  });

  it('turns a failure reported inside the stream into an error chunk', () => {
    const decoder = new MinimaxStreamDecoder();
    const events = decoder.push(
      Buffer.from('data: {"id":"x","base_resp":{"status_code":1027,"status_msg":"output sensitive"}}\n\n'),
    );
    expect(events.map((e) => JSON.parse(e.data))).toEqual([
      { error: { message: 'MiniMax 1027: output sensitive', type: 'upstream_error', code: '1027' } },
    ]);
  });
});

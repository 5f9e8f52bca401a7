import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockRealtime, realtimeUsage, startMockRealtime } from '../support/mock-realtime.ts';
import { eventually, waitFor } from '../support/wait.ts';

// A Realtime session's client events carry prompts too (instructions, text items): a listed word gets
// the client an `error` event and the event never reaches the upstream (the session goes on), or the
// event goes on with the words starred.
const UPSTREAM_KEY = 'sk-realtime-upstream';
let gateway: Gateway;
let drop: () => Promise<void>;
let upstream: MockRealtime;
let key: string;

beforeAll(async () => {
  upstream = await startMockRealtime([UPSTREAM_KEY]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const root = await setupRoot(gateway.url);
  const channel = { name: 'rt', type: 1, key: UPSTREAM_KEY, base_url: upstream.url, models: 'gpt-realtime' };
  expect((await root.post('/api/channel/', { ...channel, group: 'default' })).body.success).toBe(true);
  await gateway.options.set('ModelRatio', JSON.stringify({ 'gpt-realtime': 1 }));
  key = (await root.post('/api/token/', { name: 'rt', unlimited_quota: true })).body.data.key;
  await eventually(
    async () => (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json(),
    (list: any) => list.data?.length === 1,
    3000,
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

/** A session through the gateway: the server events it got, and a way to send client events. */
async function session() {
  const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
    headers: { authorization: `Bearer ${key}`, 'accept-language': 'en' },
  });
  const events: any[] = [];
  socket.on('message', (data) => events.push(JSON.parse(String(data))));
  const connections = upstream.connections.length;
  await waitFor(() => events.some((e) => e.type === 'session.created'), 5000);
  const upstreamSide = upstream.connections[connections]!;
  const send = (event: object) => socket.send(JSON.stringify(event));
  const close = async () => {
    socket.close();
    await waitFor(() => upstreamSide.closed !== undefined, 5000);
  };
  return { events, send, upstream: upstreamSide, close };
}

const item = (text: string) => ({
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
});

describe('a Realtime session', () => {
  it('refuses an event with a listed word with an error event, passes it not on, and goes on', async () => {
    const s = await session();
    s.send({ type: 'session.update', session: { instructions: 'Mention test_sensitive.' } });
    s.send(item('A TEST_SENSITIVE question'));
    await waitFor(() => s.events.filter((e) => e.type === 'error').length === 2, 5000);
    for (const error of s.events.filter((e) => e.type === 'error')) {
      expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'sensitive_words_detected' });
      expect(error.error.message).toContain('The prompt contains sensitive words: test_sensitive');
    }
    // The session goes on: a clean event and a response are relayed and answered.
    upstream.usages.push(realtimeUsage({ textIn: 5, audioIn: 0, textOut: 3, audioOut: 0 }));
    s.send(item('A clean question'));
    s.send({ type: 'response.create' });
    await waitFor(() => s.events.some((e) => e.type === 'response.done'), 5000);
    expect(s.upstream.events.map((e) => e.type)).toEqual(['conversation.item.create', 'response.create']);
    expect(s.upstream.events[0].item.content[0].text).toBe('A clean question');
    await s.close();
  });

  it('stars the words in the events the upstream receives when StopOnSensitiveEnabled is off', async () => {
    await gateway.options.set('StopOnSensitiveEnabled', 'false');
    try {
      const s = await session();
      s.send({ type: 'session.update', session: { instructions: 'Mention test_sensitive.' } });
      s.send(item('A TEST_SENSITIVE question'));
      s.send({ type: 'input_audio_buffer.append', audio: 'AAAA' });
      await waitFor(() => s.upstream.events.length === 3, 5000);
      expect(s.upstream.events[0].session.instructions).toBe('Mention **************.');
      expect(s.upstream.events[1]).toEqual(item('A ************** question'));
      expect(s.upstream.events[2]).toEqual({ type: 'input_audio_buffer.append', audio: 'AAAA' });
      expect(s.events.some((e) => e.type === 'error')).toBe(false);
      await s.close();
    } finally {
      await gateway.options.set('StopOnSensitiveEnabled', 'true');
    }
  });
});

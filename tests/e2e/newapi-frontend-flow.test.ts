import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

/**
 * A newcomer's first minutes as new-api's web front end drives them: register without an invitation
 * (`aff_code: null`), mistype the password (a refusal in the envelope, never a 401 that ends the session),
 * copy a key as the front end does (`sk-` + the key POST /api/token/{id}/key answers) and call the relay.
 */
let gateway: Gateway;
let drop: () => Promise<void>;
let upstream: MockOpenAI;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const root = await setupRoot(gateway.url);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream-secret',
    base_url: upstream.url,
    models: 'gpt-4o-mini',
    group: 'default',
  });
  expect(channel.body.success).toBe(true);
  await gateway.options.setMany({ ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }), QuotaForNewUser: '1000000' });
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

describe("new-api's front end against Tollgate", () => {
  it('registers with aff_code null, survives a wrong password, and calls the relay with a copied key', async () => {
    const browser = new DashboardClient(gateway.url);
    // The register form sends every field it has, aff_code null when no invitation link was used.
    const registered = await browser.post('/api/user/register', {
      username: 'newcomer',
      password: 'password-1',
      password2: 'password-1',
      email: '',
      verification_code: '',
      aff_code: null,
    });
    expect({ status: registered.status, body: registered.body }).toMatchObject({
      status: 200,
      body: { success: true },
    });

    const signedIn = await browser.login('newcomer', 'password-1');
    expect(signedIn.body.success).toBe(true);
    const wrong = await browser.post('/api/user/login', { username: 'newcomer', password: 'wrong-password' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toMatchObject({ success: false, code: 'LOGIN_FAILED' });
    expect(wrong.body.message).toMatch(/\S/);
    // Still signed in: the refusal did not touch the session.
    const self = await browser.get('/api/user/self');
    expect(self.body).toMatchObject({ success: true, data: { username: 'newcomer' } });

    const created = await browser.post('/api/token/', { name: 'my-key', remain_quota: 500_000, expired_time: -1 });
    expect(created.body.success).toBe(true);
    const listed = await browser.get('/api/token/?p=1&size=10');
    const token = listed.body.data.items.find((t: { name: string }) => t.name === 'my-key');
    expect(token.key).not.toMatch(/^sk-/);
    const revealed = await browser.post(`/api/token/${token.id}/key`);
    expect(revealed.body.data.key).not.toMatch(/^sk-/);
    const copied = `sk-${revealed.body.data.key}`;

    upstream.behaviour = { usage: { prompt_tokens: 10, completion_tokens: 5 }, reply: 'Hello from upstream.' };
    const chat = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${copied}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
    // The routing index learns of the channel over the bus.
    const answer = await eventually(chat, (response) => response.status === 200, 2000);
    const body = (await answer.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe('Hello from upstream.');
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-secret');
  });
});

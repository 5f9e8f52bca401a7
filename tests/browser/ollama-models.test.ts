import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupRoot } from '../support/client.ts';
import { type MockOllama, startMockOllama } from '../support/mock-ollama.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// An Ollama channel's models managed from the channel list (new-api's Ollama model dialog): the pulled
// models and the server version shown, a model pulled by name and one deleted, against a mock Ollama.

let server: ConsoleGateway;
let browser: Browser;
let ollama: MockOllama;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  [server, browser, ollama] = await Promise.all([
    startConsoleGateway(),
    launchBrowser(),
    startMockOllama(['llama3.1']),
  ]);
  const root = await setupRoot(server.url, 'root-password-1');
  const created = await root.post('/api/channel/', {
    name: 'local-ollama',
    type: 4,
    key: 'proxy-key',
    base_url: ollama.url,
    models: 'llama3.1',
    group: 'default',
  });
  expect(created.body.success).toBe(true);
  ({ context, page } = await openPage(browser, server.url));
  page.on('pageerror', (error) => errors.push(error.message));
  await signInByApi(page, server.url, { username: 'root', password: 'root-password-1' });
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await ollama?.close();
});

describe('Ollama models in the console', { timeout: 60_000 }, () => {
  it('lists, pulls and deletes models of an Ollama channel', async () => {
    await page.goto('/channel');
    const row = page.locator('tr[data-channel-id]').filter({ has: page.getByText('local-ollama', { exact: true }) });
    await row.locator('[data-testid="channel-more"]').click();
    await page.locator('[data-testid="channel-ollama"]').click();
    const dialog = page.locator('[data-testid="ollama-dialog"]');
    await dialog.getByText('llama3.1', { exact: true }).waitFor();
    await dialog.getByText('Ollama 0.6.2').waitFor();

    await dialog.locator('[data-testid="ollama-model"]').fill('qwen2.5:7b');
    await dialog.locator('[data-testid="ollama-pull"]').click();
    await dialog.getByText('qwen2.5:7b', { exact: true }).waitFor();
    expect(ollama.models.has('qwen2.5:7b')).toBe(true);
    await screenshot(page, 'admin-ollama-models');

    await dialog.locator('li').filter({ hasText: 'llama3.1' }).getByRole('button').click();
    await dialog.getByText('llama3.1', { exact: true }).waitFor({ state: 'detached' });
    expect([...ollama.models]).toEqual(['qwen2.5:7b']);
    expect(errors).toEqual([]);
  });
});

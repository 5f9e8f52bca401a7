import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { waitFor } from '../../../../tests/support/wait.ts';
import { type ClusterState, createClusterState } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { Store } from '../../store/index.ts';
import { type OptionChange, type OptionsLogger, OptionsService } from './service.ts';

// Real database (Postgres, or PGlite when there is none) and real cluster state (Redis when the
// tests have one, else the in-process bus): two cluster states on one namespace are two pods.
const redisUrl = inject('redisUrl');

let database: { store: Store; dispose(): Promise<void> };
const opened: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  database = await createTestStore();
}, 60_000);

afterAll(async () => {
  await database.dispose();
});

beforeEach(async () => {
  await database.store.db.deleteFrom('options').execute();
});

afterEach(async () => {
  // Services first, then the cluster states they subscribed on.
  for (const item of opened.splice(0).reverse()) await item.close();
});

function recordingLogger() {
  const warnings: Array<{ obj: object; msg: string }> = [];
  const errors: Array<{ obj: object; msg: string }> = [];
  const logger: OptionsLogger = {
    warn: (obj, msg) => warnings.push({ obj, msg }),
    error: (obj, msg) => errors.push({ obj, msg }),
  };
  return { logger, warnings, errors };
}

/** `count` pods sharing a bus, each with an options service on the shared database. */
async function pods(count: number, syncIntervalMs = 60_000, logger?: OptionsLogger): Promise<OptionsService[]> {
  const namespace = `tollgate-options-test-${randomUUID()}`;
  const services: OptionsService[] = [];
  for (let i = 0; i < count; i++) {
    const cluster: ClusterState = await createClusterState({ redisUrl, namespace });
    opened.push(cluster);
    const service = await OptionsService.start({ db: database.store.db, bus: cluster.bus, syncIntervalMs, logger });
    opened.push(service);
    services.push(service);
  }
  return services;
}

async function pod(syncIntervalMs?: number, logger?: OptionsLogger): Promise<OptionsService> {
  const [service] = await pods(1, syncIntervalMs, logger);
  return service!;
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof AppError) return error;
  throw new Error(`expected an AppError, got ${String(error)}`);
}

function storedRow(key: string) {
  return database.store.db.selectFrom('options').selectAll().where('key', '=', key).executeTakeFirst();
}

describe('OptionsService', () => {
  it('serves the defaults on an empty database, with typed getters', async () => {
    const options = await pod();
    expect(options.get('SystemName')).toBe('Tollgate');
    expect(options.getNumber('QuotaPerUnit')).toBe(500000);
    expect(options.getNumber('gemini.thinking_adapter_budget_tokens_percentage')).toBe(0.6);
    expect(options.getBoolean('PasswordLoginEnabled')).toBe(true);
    expect(options.getBoolean('ModelRequestRateLimitEnabled')).toBe(false);
    expect(options.getJson<Record<string, number>>('GroupRatio')).toEqual({ default: 1, vip: 1, svip: 1 });
    expect(options.getJson('Chats')).toEqual([]);
    expect(options.all().RetryTimes).toBe('0');
    expect(() => options.get('NoSuchOption')).toThrow('unknown option NoSuchOption');
    expect(() => options.getBoolean('RetryTimes')).toThrow('of type integer');
  });

  it('saves a value, serves it, and finds it again after a restart', async () => {
    const options = await pod();
    const before = Math.floor(Date.now() / 1000);
    await options.set('claude.thinking_adapter_budget_tokens_percentage', '0.50');
    await options.set('RegisterEnabled', 'false');
    await options.set('ModelRatio', '{"gpt-4o": 2}');
    expect(options.getNumber('claude.thinking_adapter_budget_tokens_percentage')).toBe(0.5);
    expect(options.getBoolean('RegisterEnabled')).toBe(false);
    expect(options.getJson('ModelRatio')).toEqual({ 'gpt-4o': 2 });

    const row = await storedRow('claude.thinking_adapter_budget_tokens_percentage');
    expect(row?.value).toBe('0.5');
    expect(row?.updated_at).toBeGreaterThanOrEqual(before);
    expect(row?.managed_by).toBeNull();

    const restarted = await pod();
    expect(restarted.get('claude.thinking_adapter_budget_tokens_percentage')).toBe('0.5');
    expect(restarted.getBoolean('RegisterEnabled')).toBe(false);
    expect(restarted.getJson('ModelRatio')).toEqual({ 'gpt-4o': 2 });
  });

  it('writes nothing when a value is invalid, and setMany is all or nothing', async () => {
    const options = await pod();
    const unknown = await rejection(options.set('NoSuchOption', '1'));
    expect([unknown.code, unknown.status]).toEqual(['OPTION_UNKNOWN', 400]);
    const range = await rejection(options.set('gemini.thinking_adapter_budget_tokens_percentage', '1.5'));
    expect(range.code).toBe('OPTION_TOO_LARGE');
    const json = await rejection(options.set('Chats', '[{'));
    expect(json.localized('zh')).toBe('不是合法的 JSON 字符串');

    const mixed = await rejection(options.setMany({ RetryTimes: '3', RegisterEnabled: 'maybe' }));
    expect(mixed.code).toBe('OPTION_NOT_BOOLEAN');
    expect(await database.store.db.selectFrom('options').selectAll().execute()).toEqual([]);
    expect(options.get('RetryTimes')).toBe('0');

    await options.setMany([
      { key: 'RetryTimes', value: '3' },
      { key: 'AutomaticDisableStatusCodes', value: '401, 429' },
    ]);
    expect(options.get('RetryTimes')).toBe('3');
    expect((await storedRow('AutomaticDisableStatusCodes'))?.value).toBe('401,429');
  });

  it('never lists secrets publicly, but keeps them for the server', async () => {
    const options = await pod();
    await options.setMany({ SMTPToken: 'smtp-password', GitHubClientSecret: 'gh-secret', TurnstileSiteKey: 'site' });
    const listed = new Map(options.publicList().map(({ key, value }) => [key, value]));
    for (const key of ['SMTPToken', 'GitHubClientSecret', 'TurnstileSecretKey', 'EpayKey', 'WeChatServerToken']) {
      expect(listed.has(key), key).toBe(false);
    }
    expect(listed.get('TurnstileSiteKey')).toBe('site');
    expect(listed.get('SystemName')).toBe('Tollgate');
    expect(JSON.stringify(options.publicList())).not.toContain('smtp-password');
    expect(options.all().SMTPToken).toBe('smtp-password');
  });

  it('shows a change made on one pod on every other pod within a second', async () => {
    const [a, b] = await pods(2);
    const changes: OptionChange[] = [];
    b!.onChange((change) => changes.push(change));
    const started = Date.now();
    await a!.set('SystemName', 'Acme Gateway');
    await waitFor(() => b!.get('SystemName') === 'Acme Gateway', 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(changes).toEqual([{ key: 'SystemName', value: 'Acme Gateway', previous: 'Tollgate', source: 'remote' }]);

    await b!.setMany({ RetryTimes: '2', 'gemini.thinking_adapter_enabled': 'true' });
    await waitFor(() => a!.getNumber('RetryTimes') === 2 && a!.getBoolean('gemini.thinking_adapter_enabled'), 1000);
  });

  it('resolves a typed value once, and again after every change of the option or its overlay', async () => {
    const [a, b] = await pods(2);
    expect(b!.getNumber('RetryTimes')).toBe(0);
    expect(b!.getBoolean('RegisterEnabled')).toBe(true);
    const ratios = b!.getJson('ModelRatio');
    expect(b!.getJson('ModelRatio')).toBe(ratios);
    // A typed read cached under one type still refuses a getter of another.
    expect(() => b!.getBoolean('RetryTimes')).toThrow('of type integer');

    await a!.setMany({ RetryTimes: '3', RegisterEnabled: 'false', ModelRatio: '{"m": 2}' });
    await waitFor(() => b!.getNumber('RetryTimes') === 3, 1000);
    expect(b!.getBoolean('RegisterEnabled')).toBe(false);
    expect(b!.getJson('ModelRatio')).toEqual({ m: 2 });
    expect(a!.getNumber('RetryTimes')).toBe(3);

    b!.setOverlay('ModelRatio', (stored) => ({ ...(stored as object), n: 1 }));
    expect(b!.getJson('ModelRatio')).toEqual({ m: 2, n: 1 });
    b!.setOverlay('ModelRatio', undefined);
    expect(b!.getJson('ModelRatio')).toEqual({ m: 2 });
  });

  it('tells local listeners about local writes, once per changed value', async () => {
    const options = await pod();
    const changes: OptionChange[] = [];
    const stop = options.onChange((change) => changes.push(change));
    await options.set('RetryTimes', '1');
    await options.set('RetryTimes', '1');
    stop();
    await options.set('RetryTimes', '2');
    expect(changes).toEqual([{ key: 'RetryTimes', value: '1', previous: '0', source: 'local' }]);
  });

  it('repairs missed messages with the periodic full re-read', async () => {
    const options = await pod(100);
    // A write that announces nothing, as if the bus message were lost.
    await database.store.db
      .insertInto('options')
      .values({ key: 'TopUpLink', value: 'https://pay.example.com', updated_at: 1 })
      .execute();
    await waitFor(() => options.get('TopUpLink') === 'https://pay.example.com', 2000);
    // A deleted row means the default again.
    await database.store.db.deleteFrom('options').where('key', '=', 'TopUpLink').execute();
    await waitFor(() => options.get('TopUpLink') === '', 2000);
  });

  it('ignores stored rows for unknown keys and invalid stored values, and says so once', async () => {
    await database.store.db
      .insertInto('options')
      .values([
        { key: 'RemovedLongAgo', value: 'x', updated_at: 1 },
        { key: 'RetryTimes', value: 'lots', updated_at: 1 },
        { key: 'SystemName', value: 'Stored Name', updated_at: 1 },
      ])
      .execute();
    const { logger, warnings } = recordingLogger();
    const options = await pod(60_000, logger);
    expect(options.get('SystemName')).toBe('Stored Name');
    expect(options.get('RetryTimes')).toBe('0');
    expect(options.all()).not.toHaveProperty('RemovedLongAgo');
    await options.sync();
    expect(warnings.map((w) => [w.msg, (w.obj as { key: string }).key])).toEqual([
      ['ignoring stored option: unknown key', 'RemovedLongAgo'],
      ['ignoring stored option: invalid value', 'RetryTimes'],
    ]);
  });

  it('refuses to edit an option a Kubernetes resource manages, naming the resource', async () => {
    const options = await pod();
    await options.set('RetryTimes', '4', {
      managedBy: 'tollgate-operator',
      resource: { namespace: 'gateway', name: 'settings', uid: 'uid-1' },
    });
    expect(await storedRow('RetryTimes')).toMatchObject({
      value: '4',
      managed_by: 'tollgate-operator',
      managed_namespace: 'gateway',
      managed_name: 'settings',
      managed_uid: 'uid-1',
    });

    const refused = await rejection(options.set('RetryTimes', '1'));
    expect([refused.code, refused.status]).toEqual(['OPTION_MANAGED', 409]);
    expect(refused.localized('en')).toBe(
      'Option RetryTimes is managed by the Kubernetes resource gateway/settings; edit that resource instead',
    );
    expect(refused.localized('zh')).toContain('gateway/settings');
    const other = await rejection(options.set('RetryTimes', '1', { managedBy: 'someone-else' }));
    expect(other.code).toBe('OPTION_MANAGED');
    // One managed key spoils the whole batch.
    const batch = await rejection(options.setMany({ SystemName: 'X', RetryTimes: '1' }));
    expect(batch.code).toBe('OPTION_MANAGED');
    expect(options.get('SystemName')).toBe('Tollgate');
    expect(await storedRow('SystemName')).toBeUndefined();

    // The owner may still change it, and the row stays managed.
    await options.set('RetryTimes', '5', { managedBy: 'tollgate-operator' });
    expect(options.get('RetryTimes')).toBe('5');
    expect(await storedRow('RetryTimes')).toMatchObject({ value: '5', managed_by: 'tollgate-operator' });
  });

  it('stops following changes once closed', async () => {
    const [a, b] = await pods(2, 50);
    await b!.close();
    await a!.set('SystemName', 'After Close');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(b!.get('SystemName')).toBe('Tollgate');
  });
});

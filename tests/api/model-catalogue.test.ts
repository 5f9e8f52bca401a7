import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let catalogueServer: Server;
let catalogueUrl: string;
/** What the local upstream catalogue answers next: a status and a body. */
let upstream: { status: number; body: string } = { status: 200, body: '{"models":[]}' };
let counter = 0;

const clients = clientsFrom(() => gateway.url, '10.77.0');
const db = () => gateway.store.db;

beforeAll(async () => {
  catalogueServer = createServer((_request, response) => {
    // Status 0: a catalogue server that accepts the connection and never answers.
    if (upstream.status === 0) return;
    response.writeHead(upstream.status, { 'content-type': 'application/json' });
    response.end(upstream.body);
  });
  await new Promise<void>((resolve) => catalogueServer.listen(0, '127.0.0.1', resolve));
  catalogueUrl = `http://127.0.0.1:${(catalogueServer.address() as AddressInfo).port}/catalogue.json`;
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  root.headers['x-forwarded-for'] = '10.77.1.1';
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  catalogueServer?.closeAllConnections();
  await new Promise((resolve) => catalogueServer?.close(resolve));
});

/** A fresh name, so tests never see each other's models. */
const unique = (prefix: string) => `${prefix}-${++counter}-${Date.now().toString(36)}`;

async function ok(answer: Promise<{ status: number; body: any }>): Promise<any> {
  const { status, body } = await answer;
  expect(status).toBe(200);
  expect(body, JSON.stringify(body)).toMatchObject({ success: true });
  return body.data;
}

/** A channel serving `models` in the default group. */
async function channel(models: string[]): Promise<void> {
  await ok(
    root.post('/api/channel/', {
      name: unique('catalogue'),
      type: 1,
      key: 'sk-catalogue',
      base_url: 'http://127.0.0.1:9',
      models: models.join(','),
      group: 'default',
    }),
  );
}

async function setPrices(prices: Record<string, number>): Promise<void> {
  await gateway.options.set('ModelRatio', JSON.stringify({ ...gateway.options.getJson('ModelRatio'), ...prices }));
}

describe('vendors', () => {
  it('creates, reads, searches, changes and deletes a vendor; names are unique', async () => {
    const name = unique('Vendor');
    const created = await ok(root.post('/api/vendors/', { name, description: 'makes models', icon: 'OpenAI' }));
    expect(created).toMatchObject({ name, description: 'makes models', icon: 'OpenAI', status: 1 });
    expect(refusalOf(await root.post('/api/vendors/', { name }))).toEqual({
      status: 200,
      success: false,
      code: 'VENDOR_NAME_TAKEN',
    });
    expect(refusalOf(await root.post('/api/vendors/', { name: '  ' })).code).toBe('VENDOR_NAME_REQUIRED');
    expect(await ok(root.get(`/api/vendors/${created.id}`))).toMatchObject({ id: created.id, name });
    const found = await ok(root.get(`/api/vendors/search?keyword=${encodeURIComponent(name)}`));
    expect(found).toMatchObject({ total: 1, page: 1, page_size: 10 });
    expect(found.items[0].id).toBe(created.id);
    const changed = await ok(root.put('/api/vendors/', { id: created.id, name: `${name}-2`, status: 0 }));
    expect(changed).toMatchObject({ name: `${name}-2`, status: 0, description: 'makes models' });
    expect(refusalOf(await root.put('/api/vendors/', { name: 'x' })).code).toBe('VENDOR_ID_REQUIRED');

    const model = await ok(root.post('/api/models/', { model_name: unique('m'), vendor_id: created.id }));
    expect(model.vendor_id).toBe(created.id);
    await ok(root.delete(`/api/vendors/${created.id}`));
    expect(refusalOf(await root.get(`/api/vendors/${created.id}`)).code).toBe('VENDOR_NOT_FOUND');
    // The model stays, without a vendor.
    expect((await ok(root.get(`/api/models/${model.id}`))).vendor_id).toBe(0);
    expect(refusalOf(await root.delete(`/api/vendors/${created.id}`)).code).toBe('VENDOR_NOT_FOUND');
  });

  it('is for administrators only', async () => {
    const user = await clients.user(`plain${++counter}`);
    expect(refusalOf(await user.get('/api/vendors/')).code).toBe('FORBIDDEN');
    expect(refusalOf(await user.post('/api/models/', { model_name: 'x' })).code).toBe('FORBIDDEN');
    expect((await clients.client().get('/api/models/')).status).toBe(401);
  });
});

describe('models', () => {
  it('creates with metadata, refuses bad input with stable codes, changes and deletes', async () => {
    const name = unique('meta-model');
    const created = await ok(
      root.post('/api/models/', {
        model_name: name,
        description: 'a test model',
        tags: 'chat,fast',
        icon: 'OpenAI',
        endpoints: '["openai"]',
      }),
    );
    expect(created).toMatchObject({
      model_name: name,
      description: 'a test model',
      tags: 'chat,fast',
      icon: 'OpenAI',
      endpoints: '["openai"]',
      status: 1,
      sync_official: 1,
      name_rule: 0,
      vendor_id: 0,
      bound_channels: [],
      enable_groups: [],
    });
    expect(refusalOf(await root.post('/api/models/', { model_name: name })).code).toBe('MODEL_NAME_TAKEN');
    expect(refusalOf(await root.post('/api/models/', { model_name: '' })).code).toBe('MODEL_NAME_REQUIRED');
    expect(refusalOf(await root.post('/api/models/', { model_name: unique('e'), endpoints: 'nope' })).code).toBe(
      'MODEL_ENDPOINTS_INVALID',
    );
    expect(refusalOf(await root.post('/api/models/', { model_name: unique('v'), vendor_id: 999999 })).code).toBe(
      'MODEL_VENDOR_UNKNOWN',
    );
    for (const answer of [
      await root.post('/api/models/', { model_name: unique('big'), vendor_id: 1e12 }),
      await root.get('/api/models/99999999999'),
      await root.put('/api/models/', { id: 99999999999, description: 'x' }),
      await root.delete('/api/vendors/99999999999'),
      await root.post('/api/models/', { model_name: 'x'.repeat(129) }),
    ]) {
      expect(refusalOf(answer), JSON.stringify(answer.body)).toMatchObject({ status: 200, success: false });
    }
    // LIKE's own characters are searched for as text.
    const odd = await root.get(`/api/models/search?keyword=${encodeURIComponent('%_\\')}`);
    expect(odd.body).toMatchObject({ success: true, data: { total: 0 } });
    const badRule = await root.post('/api/models/', { model_name: unique('r'), name_rule: 7 });
    expect(badRule.status).toBe(200);
    expect(badRule.body.success).toBe(false);

    const changed = await ok(root.put('/api/models/', { id: created.id, description: 'changed', status: 0 }));
    expect(changed).toMatchObject({ model_name: name, description: 'changed', status: 0, tags: 'chat,fast' });
    const statusOnly = await ok(
      root.put('/api/models/?status_only=true', { id: created.id, status: 1, description: 'ignored' }),
    );
    expect(statusOnly).toMatchObject({ status: 1, description: 'changed' });
    expect(refusalOf(await root.put('/api/models/', { description: 'x' })).code).toBe('MODEL_ID_REQUIRED');
    expect(refusalOf(await root.put('/api/models/', { id: 999999, description: 'x' })).code).toBe('MODEL_NOT_FOUND');

    await ok(root.delete(`/api/models/${created.id}`));
    expect(refusalOf(await root.get(`/api/models/${created.id}`)).code).toBe('MODEL_NOT_FOUND');
  });

  it('refuses the loser of a race for one name like a taken name, never with a 5xx', async () => {
    const name = unique('raced');
    const answers = await Promise.all(Array.from({ length: 6 }, () => root.post('/api/models/', { model_name: name })));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    for (const a of answers.filter((a) => !a.body.success)) expect(a.body.code).toBe('MODEL_NAME_TAKEN');
    const vendor = unique('RacedVendor');
    const vendors = await Promise.all(Array.from({ length: 6 }, () => root.post('/api/vendors/', { name: vendor })));
    expect(vendors.filter((a) => a.body.success)).toHaveLength(1);
    for (const a of vendors.filter((a) => !a.body.success)) expect(a.body.code).toBe('VENDOR_NAME_TAKEN');
  });

  it('lists with paging, keyword and vendor filters, and shows who serves each entry', async () => {
    const vendor = await ok(root.post('/api/vendors/', { name: unique('ListVendor') }));
    const stem = unique('listed');
    const served = `${stem}-a`;
    await channel([served, `${stem}-b`]);
    await ok(root.post('/api/models/', { model_name: served, vendor_id: vendor.id, tags: 'needle' }));
    const rule = await ok(root.post('/api/models/', { model_name: stem, name_rule: 1, vendor_id: vendor.id }));
    expect(rule).toMatchObject({ matched_models: [served, `${stem}-b`], matched_count: 2, enable_groups: ['default'] });
    expect(rule.bound_channels).toHaveLength(1);

    const page = await ok(root.get(`/api/models/search?keyword=${encodeURIComponent(stem)}&p=1&page_size=1`));
    expect(page).toMatchObject({ total: 2, page: 1, page_size: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.vendor_counts[String(vendor.id)]).toBe(2);
    const second = await ok(root.get(`/api/models/search?keyword=${encodeURIComponent(stem)}&p=2&page_size=1`));
    expect(second.items[0].id).not.toBe(page.items[0].id);
    const byTag = await ok(root.get(`/api/models/search?keyword=needle&vendor=${vendor.id}`));
    expect(byTag.items.map((m: { model_name: string }) => m.model_name)).toEqual([served]);
    const byVendorName = await ok(root.get(`/api/models/search?vendor=${encodeURIComponent(vendor.name)}`));
    expect(byVendorName.total).toBe(2);
    await ok(root.put('/api/models/?status_only=true', { id: rule.id, status: 0 }));
    const enabled = await ok(root.get(`/api/models/search?keyword=${encodeURIComponent(stem)}&status=1`));
    expect(enabled.items.map((m: { model_name: string }) => m.model_name)).toEqual([served]);
    const disabled = await ok(
      root.get(`/api/models/search?keyword=${encodeURIComponent(stem)}&status=0&sync_official=1`),
    );
    expect(disabled.items.map((m: { model_name: string }) => m.model_name)).toEqual([stem]);
    const all = await ok(root.get('/api/models/?page_size=100'));
    expect(all.total).toBeGreaterThanOrEqual(2);
  });
});

describe('missing models and the pricing page', () => {
  it('reports served models without metadata or without a price', async () => {
    const [both, noMeta, noPrice] = [unique('has-both'), unique('no-meta'), unique('no-price')];
    await setPrices({ [both]: 1, [noMeta]: 2 });
    await channel([both, noMeta, noPrice]);
    await ok(root.post('/api/models/', { model_name: both }));
    await ok(root.post('/api/models/', { model_name: noPrice }));
    const answer = await root.get('/api/models/missing');
    expect(answer.body.success).toBe(true);
    expect(answer.body.data).toContain(noMeta);
    expect(answer.body.data).toContain(noPrice);
    expect(answer.body.data).not.toContain(both);
    expect(answer.body.missing_metadata).toContain(noMeta);
    expect(answer.body.missing_metadata).not.toContain(noPrice);
    expect(answer.body.missing_price).toContain(noPrice);
    expect(answer.body.missing_price).not.toContain(noMeta);
  });

  it('carries each model entry and its vendor in /api/pricing', async () => {
    const vendor = await ok(root.post('/api/vendors/', { name: unique('PriceVendor'), icon: 'Claude' }));
    const [described, bare, disabled] = [unique('priced'), unique('bare'), unique('hidden')];
    await setPrices({ [described]: 1, [bare]: 1, [disabled]: 1 });
    await channel([described, bare, disabled]);
    await ok(
      root.post('/api/models/', {
        model_name: described,
        vendor_id: vendor.id,
        description: 'shown',
        tags: 'a,b',
        icon: 'Claude',
      }),
    );
    await ok(root.post('/api/models/', { model_name: disabled, description: 'not shown', status: 0 }));
    const pricing = (await clients.client().get('/api/pricing')).body;
    const item = (name: string) => pricing.data.find((i: { model_name: string }) => i.model_name === name);
    expect(item(described)).toMatchObject({ vendor_id: vendor.id, description: 'shown', tags: 'a,b', icon: 'Claude' });
    expect(item(bare)).not.toHaveProperty('description');
    expect(item(disabled)).not.toHaveProperty('description');
    expect(pricing.vendors).toContainEqual({ id: vendor.id, name: vendor.name, description: '', icon: 'Claude' });
  });
});

describe('upstream catalogue sync', () => {
  beforeEach(async () => {
    await gateway.options.setMany({
      ModelCatalogueUpstreamURL: catalogueUrl,
      // The local catalogue server listens on loopback at a random port.
      'fetch_setting.enable_ssrf_protection': 'false',
    });
  });

  const serve = (body: unknown, status = 200) => {
    upstream = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
  };

  it('refuses with a clear code when the URL is unset, unreachable, not JSON, malformed or too large', async () => {
    await gateway.options.set('ModelCatalogueUpstreamURL', '');
    expect(refusalOf(await root.get('/api/models/sync_upstream/preview'))).toEqual({
      status: 200,
      success: false,
      code: 'CATALOGUE_URL_NOT_SET',
    });
    await gateway.options.set('ModelCatalogueUpstreamURL', catalogueUrl);
    serve('{"models": [', 200);
    expect(refusalOf(await root.get('/api/models/sync_upstream/preview')).code).toBe('CATALOGUE_INVALID_JSON');
    serve({ models: [{ model_name: 5 }] });
    const malformed = await root.get('/api/models/sync_upstream/preview');
    expect(refusalOf(malformed).code).toBe('CATALOGUE_INVALID');
    expect(malformed.body.message).toContain('models[0].model_name');
    serve({ models: [{ model_name: 'x', model_ratio: -1 }] });
    expect(refusalOf(await root.get('/api/models/sync_upstream/preview')).code).toBe('CATALOGUE_INVALID');
    serve('oops', 500);
    const failed = await root.get('/api/models/sync_upstream/preview');
    expect(refusalOf(failed).code).toBe('CATALOGUE_FETCH_FAILED');
    expect(failed.body.message).toContain('HTTP 500');
    serve({ models: [{ model_name: 'big' }], padding: 'y'.repeat(6 * 1024 * 1024) });
    expect(refusalOf(await root.post('/api/models/sync_upstream', {})).code).toBe('CATALOGUE_TOO_LARGE');
    // With the outbound guard on, loopback is refused as any user-set URL is.
    await gateway.options.set('fetch_setting.enable_ssrf_protection', 'true');
    expect(refusalOf(await root.get('/api/models/sync_upstream/preview')).code).toBe('OUTBOUND_URL_REFUSED');
  });

  it('answers malformed requests with a refusal, never a 5xx, and writes nothing', async () => {
    serve({ models: [] });
    const before = await db()
      .selectFrom('models')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    for (const [method, path, body] of [
      ['POST', '/api/models/sync_upstream', []],
      ['POST', '/api/models/sync_upstream', 'text'],
      ['POST', '/api/models/sync_upstream', { overwrite: 'all' }],
      ['POST', '/api/models/sync_upstream', { overwrite: [{ model_name: 'x', fields: [1] }] }],
      ['POST', '/api/models/sync_upstream', { create: [{}] }],
      ['POST', '/api/models/', []],
      ['POST', '/api/models/', { model_name: ['a'] }],
      ['PUT', '/api/models/', { id: 'abc', model_name: 'x' }],
      ['PUT', '/api/models/', { id: -1 }],
      ['POST', '/api/vendors/', { name: 5 }],
      ['PUT', '/api/vendors/', { id: 1.5, name: 'x' }],
      ['GET', '/api/models/abc', undefined],
      ['DELETE', '/api/models/0', undefined],
      ['GET', '/api/models/?p=-1&page_size=100000', undefined],
    ] as const) {
      const answer = await root.call(method, path, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}: ${answer.status}`).toBeLessThan(500);
      if (path.includes('page_size')) expect(answer.body.success).toBe(true);
      else expect(answer.body.success, `${method} ${path} ${JSON.stringify(body)}`).toBe(false);
    }
    const after = await db()
      .selectFrom('models')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('gives up on a catalogue server that never answers, with a clear code', { timeout: 30_000 }, async () => {
    serve('', 0);
    const started = Date.now();
    const answer = await root.get('/api/models/sync_upstream/preview');
    expect(refusalOf(answer)).toEqual({ status: 200, success: false, code: 'CATALOGUE_FETCH_FAILED' });
    expect(answer.body.message).toContain('timed out');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('previews creations and differences, then applies only the chosen ones in one go', async () => {
    const [fresh, local, priced, unserved, kept] = [
      unique('fresh'),
      unique('local'),
      unique('priced'),
      unique('unserved'),
      unique('kept'),
    ];
    await setPrices({ [local]: 1, [priced]: 3 });
    await channel([fresh, local, priced, kept]);
    const localEntry = await ok(root.post('/api/models/', { model_name: local, description: 'ours', tags: 'mine' }));
    await ok(root.post('/api/models/', { model_name: kept, description: 'do not sync', sync_official: 0 }));
    const vendorName = unique('UpVendor');
    serve({
      vendors: [{ name: vendorName, description: 'from upstream', icon: 'Up' }],
      models: [
        { model_name: fresh, description: 'new one', tags: 'up', vendor_name: vendorName, endpoints: ['openai'] },
        { model_name: local, description: 'theirs', tags: 'mine', icon: 'Up', model_ratio: 2, completion_ratio: 4 },
        { model_name: priced, model_price: 0.05 },
        { model_name: unserved, description: 'nobody serves it' },
        { model_name: kept, description: 'changed upstream', model_ratio: 9 },
      ],
    });

    const preview = await ok(root.get('/api/models/sync_upstream/preview'));
    expect(preview.missing).toContain(fresh);
    expect(preview.missing).toContain(priced);
    expect(preview.missing).not.toContain(unserved);
    expect(preview.missing).not.toContain(local);
    const conflictsOf = (name: string) =>
      preview.conflicts.find((c: { model_name: string }) => c.model_name === name)?.fields ?? [];
    expect(conflictsOf(local)).toEqual([
      { field: 'description', local: 'ours', upstream: 'theirs' },
      { field: 'icon', local: '', upstream: 'Up' },
      {
        field: 'price',
        local: { model_ratio: 1, completion_ratio: null, model_price: null },
        upstream: { model_ratio: 2, completion_ratio: 4 },
      },
    ]);
    expect(conflictsOf(priced)).toEqual([
      {
        field: 'price',
        local: { model_ratio: 3, completion_ratio: null, model_price: null },
        upstream: { model_price: 0.05 },
      },
    ]);
    expect(conflictsOf(kept)).toEqual([]);
    expect(preview.source.url).toBe(catalogueUrl);

    // Nothing is written by a preview.
    expect(await db().selectFrom('models').select('id').where('model_name', '=', fresh).executeTakeFirst()).toBe(
      undefined,
    );

    const applied = await ok(
      root.post('/api/models/sync_upstream', {
        create: [fresh],
        overwrite: [
          { model_name: local, fields: ['description', 'price'] },
          { model_name: kept, fields: ['description'] },
        ],
      }),
    );
    expect(applied).toMatchObject({
      created_models: 1,
      created_vendors: 1,
      updated_models: 1,
      updated_prices: 1,
      created_list: [fresh],
      updated_list: [local],
      priced_list: [local],
      skipped_models: [kept],
    });
    const rows = await db()
      .selectFrom('models')
      .selectAll()
      .where('model_name', 'in', [fresh, local, priced, kept])
      .execute();
    const row = (name: string) => rows.find((r) => r.model_name === name);
    const vendor = await db()
      .selectFrom('vendors')
      .selectAll()
      .where('name', '=', vendorName)
      .executeTakeFirstOrThrow();
    expect(vendor).toMatchObject({ description: 'from upstream', icon: 'Up' });
    expect(row(fresh)).toMatchObject({
      description: 'new one',
      tags: 'up',
      vendor_id: vendor.id,
      endpoints: '["openai"]',
    });
    // Only the chosen field changed.
    expect(row(local)).toMatchObject({ id: localEntry.id, description: 'theirs', icon: '', tags: 'mine' });
    expect(row(priced)).toBeUndefined();
    expect(row(kept)?.description).toBe('do not sync');
    expect(gateway.options.getJson<Record<string, number>>('ModelRatio')[local]).toBe(2);
    expect(gateway.options.getJson<Record<string, number>>('CompletionRatio')[local]).toBe(4);
    expect(gateway.options.getJson<Record<string, number>>('ModelPrice')[priced]).toBeUndefined();

    const pricing = (await clients.client().get('/api/pricing')).body;
    expect(pricing.data.find((i: { model_name: string }) => i.model_name === local)).toMatchObject({
      model_ratio: 2,
      completion_ratio: 4,
      description: 'theirs',
    });

    // A second apply with everything: the rest is created and priced per call.
    const rest = await ok(
      root.post('/api/models/sync_upstream', { overwrite: [{ model_name: priced, fields: ['price'] }] }),
    );
    expect(rest.created_list).toEqual([priced]);
    expect(gateway.options.getJson<Record<string, number>>('ModelPrice')[priced]).toBe(0.05);
    const after = await ok(root.get('/api/models/sync_upstream/preview'));
    expect(after.missing).not.toContain(fresh);
    expect(after.missing).not.toContain(priced);
  });

  it('writes nothing when a chosen price belongs to a ModelPrice resource', async () => {
    const [owned, fresh] = [unique('owned'), unique('fresh-owned')];
    await channel([owned, fresh]);
    await db()
      .insertInto('model_prices')
      .values({
        model: owned,
        model_ratio: 5,
        managed_by: 'tollgate-operator',
        managed_name: 'owned',
        managed_namespace: 'ns',
        updated_at: 0,
      })
      .execute();
    await gateway.cluster.bus.publish('model-prices', 'reload');
    serve({
      models: [
        { model_name: owned, model_ratio: 1 },
        { model_name: fresh, description: 'x' },
      ],
    });
    // Once the pricing service has read the resource's row, the preview shows its price as ours.
    const ownedPrice = async () => {
      const preview = await ok(root.get('/api/models/sync_upstream/preview'));
      const conflict = preview.conflicts.find((c: { model_name: string }) => c.model_name === owned);
      return conflict?.fields.find((f: { field: string }) => f.field === 'price')?.local.model_ratio;
    };
    await expect.poll(ownedPrice, { timeout: 10_000 }).toBe(5);
    const refused = await root.post('/api/models/sync_upstream', {
      overwrite: [{ model_name: owned, fields: ['price'] }],
    });
    expect(refused.body.success).toBe(false);
    expect(await db().selectFrom('models').select('id').where('model_name', '=', fresh).executeTakeFirst()).toBe(
      undefined,
    );
    expect(
      refusalOf(await root.post('/api/models/sync_upstream', { overwrite: [{ model_name: owned, fields: ['nope'] }] }))
        .success,
    ).toBe(false);
  });
});

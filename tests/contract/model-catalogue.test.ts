import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  type FrontEnd,
  query,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Model management (CATALOGUE.md "Model catalogue"): the models and vendors tables, the missing-models
 * dialog, the upstream sync dialog, and the pricing page's vendor fields, as new-api's front end calls them.
 */

let g: ContractGateway;
let root: FrontEnd;
let catalogueServer: Server;

/** models/ModelsColumnDefs.jsx and EditModelModal.jsx. */
const MODEL: Shape = {
  id: 'integer',
  model_name: 'string',
  description: 'string',
  icon: 'string',
  tags: 'string',
  vendor_id: 'integer',
  endpoints: 'string',
  status: 'integer',
  sync_official: 'integer',
  name_rule: 'integer',
  created_time: 'integer',
  updated_time: 'integer',
  bound_channels: 'array',
  enable_groups: 'array',
};

/** models/modals/EditVendorModal.jsx and the vendor tabs. */
const VENDOR: Shape = {
  id: 'integer',
  name: 'string',
  description: 'string',
  icon: 'string',
  status: 'integer',
  created_time: 'integer',
  updated_time: 'integer',
};

beforeAll(async () => {
  catalogueServer = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        success: true,
        data: [
          { model_name: 'contract-missing', description: 'from upstream', vendor_name: 'Contract', model_ratio: 1 },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => catalogueServer.listen(0, '127.0.0.1', resolve));
  g = await startContractGateway('10.91.0');
  root = g.root;
  const port = (catalogueServer.address() as AddressInfo).port;
  await g.gateway.options.setMany({
    ModelCatalogueUpstreamURL: `http://127.0.0.1:${port}/models.json`,
    'fetch_setting.enable_ssrf_protection': 'false',
  });
  expectOk(
    await root.post('/api/channel/', {
      name: 'catalogue',
      type: 1,
      key: 'sk-contract',
      base_url: 'http://127.0.0.1:9',
      models: 'contract-missing,contract-known',
      group: 'default',
    }),
  );
});

afterAll(async () => {
  await g?.stop();
  await new Promise((resolve) => catalogueServer?.close(resolve));
});

describe('models table (useModelsData.jsx)', () => {
  it('creates, lists, searches, toggles, edits and deletes model entries', async () => {
    const vendor = expectOk(
      await root.post('/api/vendors/', { name: 'ContractVendor', description: '', icon: 'OpenAI' }),
    );
    expectShape(vendor, VENDOR, 'vendor');
    const created = expectOk(
      await root.post('/api/models/', {
        model_name: 'contract-known',
        description: 'known',
        icon: 'OpenAI',
        tags: 'chat',
        vendor_id: vendor.id,
        endpoints: '',
        status: 1,
        sync_official: 1,
        name_rule: 0,
      }),
    );
    expectShape(created, MODEL, 'created');

    const listed = expectOk(await root.get(`/api/models/?${query({ p: 1, page_size: 10 })}`));
    expectPage(listed, MODEL);
    expectShape(listed, { vendor_counts: 'object' });
    const searched = expectOk(
      await root.get(`/api/models/search?${query({ keyword: 'contract', vendor: '', p: 1, page_size: 10 })}`),
    );
    expect(expectPage(searched, MODEL).map((m) => m.model_name)).toContain('contract-known');
    const vendors = expectOk(await root.get(`/api/vendors/?${query({ page_size: 1000 })}`));
    expectPage(vendors, VENDOR);

    expectShape(expectOk(await root.put('/api/models/?status_only=true', { id: created.id, status: 0 })), {
      id: 'integer',
      status: 'integer',
    });
    expectShape(expectOk(await root.put('/api/models/', { ...created, description: 'edited' })), MODEL, 'updated');
    expectRefusal(await root.post('/api/models/', { model_name: 'contract-known' }), 'MODEL_NAME_TAKEN');
    expectShape(expectOk(await root.get(`/api/models/${created.id}`)), MODEL, 'one');
    expectOk(await root.put('/api/vendors/', { ...vendor, description: 'edited' }));
    expectShape(
      expectOk(await root.get(`/api/vendors/search?${query({ keyword: 'Contract', p: 1, page_size: 10 })}`)),
      {
        items: 'array',
        total: 'integer',
      },
    );
  });
});

describe('missing models and upstream sync dialogs', () => {
  it('lists served models without metadata as plain names', async () => {
    const answer = await root.get('/api/models/missing');
    const data = expectOk(answer);
    expect(Array.isArray(data)).toBe(true);
    expect(data).toContain('contract-missing');
    for (const name of data) expect(typeof name).toBe('string');
  });

  it('previews with missing names and field conflicts, then syncs', async () => {
    const preview = expectOk(await root.get(`/api/models/sync_upstream/preview?${query({ locale: 'zh' })}`));
    expectShape(preview, { missing: 'array', conflicts: 'array', source: 'object' });
    expect(preview.missing).toContain('contract-missing');
    for (const conflict of preview.conflicts) {
      expectShape(conflict, { model_name: 'string', fields: 'array' });
      for (const field of conflict.fields) expectShape(field, { field: 'string' });
    }
    const synced = expectOk(await root.post('/api/models/sync_upstream', { overwrite: [], locale: 'zh' }));
    expectShape(synced, {
      created_models: 'integer',
      created_vendors: 'integer',
      updated_models: 'integer',
      skipped_models: 'array',
      created_list: 'array',
      updated_list: 'array',
    });
    expect(synced.created_list).toEqual(['contract-missing']);
  });

  it('refuses a non-administrator as new-api does', async () => {
    const alice = await g.user('catalice');
    expectRefusal(await alice.get('/api/models/'));
    expectRefusal(await alice.get('/api/vendors/'));
  });
});

describe('pricing page (usePricingData.jsx)', () => {
  it('answers vendors and each model entry vendor_id, description, tags and icon', async () => {
    const pricing = await g.visitor().get('/api/pricing');
    expect(pricing.status).toBe(200);
    expect(Array.isArray(pricing.body.vendors)).toBe(true);
    for (const vendor of pricing.body.vendors) {
      expectShape(vendor, { id: 'integer', name: 'string', description: 'string', icon: 'string' });
    }
    const synced = pricing.body.data.find((m: { model_name: string }) => m.model_name === 'contract-missing');
    expectShape(synced, { vendor_id: 'integer', description: 'string', tags: 'string', icon: 'string' });
    expect(pricing.body.vendors.map((v: { id: number }) => v.id)).toContain(synced.vendor_id);
  });
});

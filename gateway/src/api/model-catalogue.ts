import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CatalogueService, ModelInput, VendorInput } from '../domain/catalogue/service.ts';
import { type CatalogueSync, SYNC_FIELDS, type SyncRequest } from '../domain/catalogue/sync.ts';
import type { authGuards } from './auth.ts';
import { ok } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { idParams, isStatusOnly, statusOnlyQuery, text } from './schemas.ts';

export interface CatalogueRouteDeps {
  guards: ReturnType<typeof authGuards>;
  catalogue: { models: CatalogueService; sync: CatalogueSync };
}

const binary = { type: 'integer', enum: [0, 1] } as const;

const modelFields = {
  id: { type: 'integer', minimum: 0, description: 'The model entry (PUT)' },
  model_name: text('The model name, or the pattern its name_rule matches', 128),
  description: text('Description', 65_536),
  icon: text('Icon name (e.g. a @lobehub/icons key)', 128),
  tags: text('Comma-separated tags', 255),
  vendor_id: { type: ['integer', 'null'], minimum: 0, description: 'The vendor; 0 or null for none' },
  endpoints: text('JSON text of the endpoints the model supports (array or object); empty for the default', 65_536),
  status: { ...binary, description: '1 enabled, 0 disabled' },
  sync_official: { ...binary, description: '0 keeps the entry out of upstream catalogue syncs' },
  name_rule: { type: 'integer', enum: [0, 1, 2, 3], description: '0 exact, 1 prefix, 2 contains, 3 suffix' },
} as const;

const vendorFields = {
  id: { type: 'integer', minimum: 0, description: 'The vendor (PUT)' },
  name: text('Vendor name', 128),
  description: text('Description', 65_536),
  icon: text('Icon name', 128),
  status: { ...binary, description: '1 enabled, 0 disabled' },
} as const;

const tags = ['models'];

/**
 * The model catalogue as new-api serves it (administrators): /api/models/* (metadata, the missing-models
 * report, upstream sync preview and apply) and /api/vendors/*.
 */
export function modelCatalogueRoutes(app: FastifyInstance, { guards, catalogue }: CatalogueRouteDeps): void {
  const { models, sync } = catalogue;
  const admin = guards.admin;

  app.get(
    '/models/sync_upstream/preview',
    { preHandler: admin, schema: { tags, summary: 'What an upstream catalogue sync would create and change' } },
    async () => ok(await sync.preview()),
  );
  app.post<{ Body: SyncRequest | null }>(
    '/models/sync_upstream',
    {
      preHandler: admin,
      schema: {
        tags,
        summary: 'Create the missing entries and overwrite the chosen fields, in one transaction',
        body: {
          type: ['object', 'null'],
          properties: {
            create: { type: 'array', maxItems: 10_000, items: text('A missing model to create', 128) },
            overwrite: {
              type: 'array',
              maxItems: 10_000,
              items: {
                type: 'object',
                required: ['model_name', 'fields'],
                properties: {
                  model_name: text('The model', 128),
                  fields: { type: 'array', maxItems: SYNC_FIELDS.length, items: { type: 'string', enum: SYNC_FIELDS } },
                },
              },
            },
            locale: text('Ignored (new-api picks a translated catalogue by it)', 16),
          },
        },
      },
    },
    async (request) => ok(await sync.apply(request.body ?? {})),
  );
  app.get(
    '/models/missing',
    { preHandler: admin, schema: { tags, summary: 'Served models without metadata or without a price' } },
    async () => {
      const report = await models.missing();
      return { ...ok(report.all), missing_metadata: report.metadata, missing_price: report.price };
    },
  );

  type ModelQuery = {
    Querystring: PagingInput & { keyword?: string; vendor?: string; status?: string; sync_official?: string };
  };
  const listModels = async (request: FastifyRequest<ModelQuery>) => {
    const { page, pageSize, offset } = paging(request.query);
    const { items, total, vendorCounts } = await models.listModels({
      keyword: request.query.keyword,
      vendor: request.query.vendor,
      status: request.query.status,
      syncOfficial: request.query.sync_official,
      offset,
      limit: pageSize,
    });
    return ok({ ...pageOf(items, total, page, pageSize), vendor_counts: vendorCounts });
  };
  const modelQuery = {
    type: 'object',
    properties: {
      ...pagingQuery,
      keyword: text('Part of the name, description or tags', 128),
      vendor: text('A vendor id, or part of its name', 128),
      status: text('1 enabled or 0 disabled entries only; empty for all', 8),
      sync_official: text('1 or 0: entries that take upstream syncs, or not; empty for all', 8),
    },
  } as const;
  app.get<ModelQuery>(
    '/models/',
    { preHandler: admin, schema: { tags, summary: 'Model entries, newest first', querystring: modelQuery } },
    listModels,
  );
  app.get<ModelQuery>(
    '/models/search',
    { preHandler: admin, schema: { tags, summary: 'Search model entries', querystring: modelQuery } },
    listModels,
  );
  app.get<{ Params: { id: number } }>(
    '/models/:id',
    { preHandler: admin, schema: { tags, summary: 'One model entry', params: idParams('Model entry id') } },
    async (request) => ok(await models.getModel(request.params.id)),
  );
  app.post<{ Body: ModelInput }>(
    '/models/',
    {
      preHandler: admin,
      schema: { tags, summary: 'Create a model entry', body: { type: 'object', properties: modelFields } },
    },
    async (request) => ok(await models.createModel(request.body)),
  );
  app.put<{ Body: ModelInput & { id?: number }; Querystring: { status_only?: string } }>(
    '/models/',
    {
      preHandler: admin,
      schema: {
        tags,
        summary: 'Change a model entry (the fields sent)',
        querystring: statusOnlyQuery,
        body: { type: 'object', properties: modelFields },
      },
    },
    async (request) => ok(await models.updateModel(request.body.id, request.body, isStatusOnly(request.query))),
  );
  app.delete<{ Params: { id: number } }>(
    '/models/:id',
    { preHandler: admin, schema: { tags, summary: 'Delete a model entry', params: idParams('Model entry id') } },
    async (request) => {
      await models.deleteModel(request.params.id);
      return ok();
    },
  );

  type VendorQuery = { Querystring: PagingInput & { keyword?: string } };
  const listVendors = async (request: FastifyRequest<VendorQuery>) => {
    const { page, pageSize, offset } = paging(request.query);
    const { items, total } = await models.listVendors({ keyword: request.query.keyword, offset, limit: pageSize });
    return ok(pageOf(items, total, page, pageSize));
  };
  const vendorQuery = {
    type: 'object',
    properties: { ...pagingQuery, keyword: text('Part of the name or description', 128) },
  } as const;
  app.get<VendorQuery>(
    '/vendors/',
    { preHandler: admin, schema: { tags, summary: 'Vendors, newest first', querystring: vendorQuery } },
    listVendors,
  );
  app.get<VendorQuery>(
    '/vendors/search',
    { preHandler: admin, schema: { tags, summary: 'Search vendors', querystring: vendorQuery } },
    listVendors,
  );
  app.get<{ Params: { id: number } }>(
    '/vendors/:id',
    { preHandler: admin, schema: { tags, summary: 'One vendor', params: idParams('Vendor id') } },
    async (request) => ok(await models.getVendor(request.params.id)),
  );
  app.post<{ Body: VendorInput }>(
    '/vendors/',
    {
      preHandler: admin,
      schema: { tags, summary: 'Create a vendor', body: { type: 'object', properties: vendorFields } },
    },
    async (request) => ok(await models.createVendor(request.body)),
  );
  app.put<{ Body: VendorInput & { id?: number } }>(
    '/vendors/',
    {
      preHandler: admin,
      schema: { tags, summary: 'Change a vendor', body: { type: 'object', properties: vendorFields } },
    },
    async (request) => ok(await models.updateVendor(request.body.id, request.body)),
  );
  app.delete<{ Params: { id: number } }>(
    '/vendors/:id',
    {
      preHandler: admin,
      schema: { tags, summary: 'Delete a vendor (its models stay, without one)', params: idParams('Vendor id') },
    },
    async (request) => {
      await models.deleteVendor(request.params.id);
      return ok();
    },
  );
}

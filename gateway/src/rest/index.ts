import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authGuards, signedIn } from '../api/auth.ts';
import { ipRateLimit } from '../api/rate-limit.ts';
import type { RateLimit } from '../config.ts';
import { AppError, defineErrors } from '../errors.ts';
import { assertWellFormed, guardInput } from '../http/input-guard.ts';
import type { Services } from '../services.ts';
import type { RestFilters } from './resource.ts';
import { restResources } from './resources/index.ts';

export const REST_ERRORS = defineErrors({
  REST_BAD_PARAMETER: {
    status: 400,
    message: { zh: '参数 {name} 必须是 JSON：{expected}', en: 'Parameter {name} must be JSON: {expected}' },
  },
  REST_UNKNOWN_RESOURCE: { status: 404, message: { zh: '没有资源 {resource}', en: 'No resource named {resource}' } },
  REST_METHOD_UNSUPPORTED: {
    status: 405,
    message: { zh: '资源 {resource} 不支持此操作', en: 'The resource {resource} does not support this operation' },
  },
});

export interface RestDeps {
  services: Services;
  rateLimit: RateLimit;
}

const listQuery = {
  type: 'object',
  properties: {
    sort: { type: 'string', maxLength: 200, description: 'JSON ["field","ASC"|"DESC"]' },
    range: { type: 'string', maxLength: 100, description: 'JSON [first, last], inclusive' },
    filter: { type: 'string', maxLength: 10_000, description: 'JSON object of filters; "q" searches, "id" lists ids' },
  },
} as const;
const resourceParams = {
  type: 'object',
  required: ['resource'],
  properties: { resource: { type: 'string', maxLength: 40 } },
} as const;
const recordParams = {
  type: 'object',
  required: ['resource', 'id'],
  properties: { resource: { type: 'string', maxLength: 40 }, id: { type: 'integer', minimum: 1 } },
} as const;
const recordBody = { type: 'object', additionalProperties: true } as const;

/**
 * /rest/*: react-admin's simple-REST dialect (ra-data-simple-rest) over the same domain services as
 * /api: lists answer a JSON array with the total in Content-Range; records answer bare JSON.
 */
export async function restPlugin(app: FastifyInstance, { services, rateLimit }: RestDeps): Promise<void> {
  const guards = authGuards({
    db: services.store.db,
    sessions: services.sessions,
    keyring: services.keyring,
    twoFactor: services.twoFactor,
  });
  const resources = restResources(services);
  app.decorateRequest('auth', null);
  app.addHook('onRequest', ipRateLimit(services.cluster.counters, 'api', rateLimit));
  app.addHook('preValidation', guardInput);
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('access-control-expose-headers', 'Content-Range');
  });

  const resolve = async (name: string, request: FastifyRequest) => {
    const resource = resources[name];
    if (!resource) throw new AppError(REST_ERRORS.REST_UNKNOWN_RESOURCE, { resource: name });
    await (resource.guard === 'admin' ? guards.admin : guards.user)(request);
    return resource;
  };
  const unsupported = (resource: string) => new AppError(REST_ERRORS.REST_METHOD_UNSUPPORTED, { resource });

  app.get<{ Params: { resource: string }; Querystring: { sort?: string; range?: string; filter?: string } }>(
    '/:resource',
    { schema: { tags: ['rest'], params: resourceParams, querystring: listQuery } },
    async (request, reply) => {
      const { resource: name } = request.params;
      const resource = await resolve(name, request);
      const sort = parseJson(request.query.sort, 'sort', isSort, '["field","ASC"]');
      const range = parseJson(request.query.range, 'range', isRange, '[0, 24]') ?? [0, 24];
      const filters = parseJson(request.query.filter, 'filter', isObject, '{"field": value}');
      const offset = range[0];
      const limit = range[1] - range[0] + 1;
      const { items, total } = await resource.list(
        { filters, sort: sort ? { field: sort[0], order: sort[1] } : undefined, offset, limit },
        signedIn(request).user,
      );
      const last = items.length === 0 ? offset : offset + items.length - 1;
      reply.header('content-range', `${name} ${offset}-${last}/${total}`);
      return items;
    },
  );

  app.get<{ Params: { resource: string; id: number } }>(
    '/:resource/:id',
    { schema: { tags: ['rest'], params: recordParams } },
    async (request) => {
      const resource = await resolve(request.params.resource, request);
      return resource.getOne(request.params.id, signedIn(request).user);
    },
  );

  app.post<{ Params: { resource: string }; Body: Record<string, unknown> }>(
    '/:resource',
    { schema: { tags: ['rest'], params: resourceParams, body: recordBody } },
    async (request, reply) => {
      const resource = await resolve(request.params.resource, request);
      if (!resource.create) throw unsupported(request.params.resource);
      reply.code(201);
      return resource.create(request.body, signedIn(request).user);
    },
  );

  app.put<{ Params: { resource: string; id: number }; Body: Record<string, unknown> }>(
    '/:resource/:id',
    { schema: { tags: ['rest'], params: recordParams, body: recordBody } },
    async (request) => {
      const resource = await resolve(request.params.resource, request);
      if (!resource.update) throw unsupported(request.params.resource);
      if (await resource.sensitiveUpdate?.(request.params.id, request.body, signedIn(request).user)) {
        await guards.stepUp(request);
      }
      return resource.update(request.params.id, request.body, signedIn(request).user);
    },
  );

  app.delete<{ Params: { resource: string; id: number } }>(
    '/:resource/:id',
    { schema: { tags: ['rest'], params: recordParams } },
    async (request) => {
      const resource = await resolve(request.params.resource, request);
      if (!resource.delete) throw unsupported(request.params.resource);
      if (resource.sensitiveDelete) await guards.stepUp(request);
      return resource.delete(request.params.id, signedIn(request).user);
    },
  );
}

function parseJson<T>(
  text: string | undefined,
  name: string,
  check: (v: unknown) => v is T,
  expected: string,
): T | undefined {
  if (text === undefined || text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError(REST_ERRORS.REST_BAD_PARAMETER, { name, expected });
  }
  if (!check(value)) throw new AppError(REST_ERRORS.REST_BAD_PARAMETER, { name, expected });
  // JSON inside the query string: its escapes (\u0000) are only text once parsed, so it is checked again here.
  assertWellFormed(value, name);
  return value;
}

const isSort = (v: unknown): v is [string, 'ASC' | 'DESC'] =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && (v[1] === 'ASC' || v[1] === 'DESC');
const isRange = (v: unknown): v is [number, number] =>
  Array.isArray(v) &&
  v.length === 2 &&
  Number.isSafeInteger(v[0]) &&
  Number.isSafeInteger(v[1]) &&
  (v[0] as number) >= 0 &&
  (v[1] as number) >= (v[0] as number);
const isObject = (v: unknown): v is RestFilters => typeof v === 'object' && v !== null && !Array.isArray(v);

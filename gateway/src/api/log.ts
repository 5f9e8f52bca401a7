import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LogFilters, LogService } from '../domain/logs/index.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { dropEmptyQuery } from './query.ts';
import { text } from './schemas.ts';

export interface LogRouteDeps {
  guards: ReturnType<typeof authGuards>;
  logs: LogService;
}

const shortText = (description: string, maxLength = 256) => text(description, maxLength);
const seconds = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;

/** The filters everyone has (spec doc 3 §7); empty or 0 means no filter. */
const userFilters = {
  type: {
    type: 'integer',
    minimum: 0,
    description: 'Log type: 0 every type (default), 1 top-up, 2 consume, 3 manage, 4 system, 5 error, 6 refund',
  },
  token_name: shortText('Token name, exact'),
  model_name: shortText('Model name, exact; % is a wildcard'),
  start_timestamp: seconds('Logs created at or after this time (Unix seconds)'),
  end_timestamp: seconds('Logs created at or before this time (Unix seconds)'),
  group: shortText('Group the request was billed in', 64),
} as const;

/** Filters only administrators have; on the self routes they are ignored. */
const adminFilters = {
  ...userFilters,
  username: shortText('Username, exact', 64),
  channel: { type: 'integer', minimum: 0, description: 'Channel id' },
} as const;

type FilterQuery = Omit<LogFilters, 'id' | 'user_id'>;

const querystring = (properties: object) => ({ type: 'object', properties }) as const;
const tags = ['log'];

/** Only what the route declares reaches the domain; the domain still pins a user to their own rows. */
function filtersOf(query: FilterQuery, admin: boolean): LogFilters {
  const filters: LogFilters = {
    type: query.type,
    token_name: query.token_name,
    model_name: query.model_name,
    start_timestamp: query.start_timestamp,
    end_timestamp: query.end_timestamp,
    group: query.group,
  };
  if (admin) Object.assign(filters, { username: query.username, channel: query.channel });
  return filters;
}

/** /api/log/* and /api/data/*: the usage log, its stats and CSV export, and the hourly dashboard data. */
export function logRoutes(app: FastifyInstance, deps: LogRouteDeps): void {
  const { guards, logs } = deps;
  const actor = (request: FastifyRequest) => signedIn(request).user;

  const list = (admin: boolean) => async (request: FastifyRequest<{ Querystring: FilterQuery & PagingInput }>) => {
    const { page, pageSize, offset } = paging(request.query);
    const result = await logs.list(
      { filters: filtersOf(request.query, admin), offset, limit: pageSize },
      actor(request),
    );
    return ok({ ...pageOf(result.items, result.total, page, pageSize), total_estimated: result.totalEstimated });
  };
  const listSummary = (who: string) =>
    `${who}, newest first: {items, total, page, page_size, total_estimated}; total is exact up to 100,000 matches and estimated beyond (total_estimated true)`;

  app.get('/log/', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: {
      tags,
      summary: listSummary("Every user's usage logs"),
      querystring: querystring({ ...pagingQuery, ...adminFilters }),
    },
    handler: list(true),
  });
  for (const url of ['/log/self', '/log/self/']) {
    app.get(url, {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: {
        tags,
        summary: listSummary("The signed-in user's own usage logs (no channel; admin-only details removed from other)"),
        querystring: querystring({ ...pagingQuery, ...userFilters }),
        ...(url.endsWith('/') ? { hide: true } : {}),
      },
      handler: list(false),
    });
  }

  const stat = (admin: boolean) => async (request: FastifyRequest<{ Querystring: FilterQuery }>) =>
    ok(await logs.stat(filtersOf(request.query, admin), actor(request)));
  const statSummary = (who: string) =>
    `${who}: quota and token (sums over consume logs matching the filters), rpm and tpm (consume logs and their tokens in the last 60 seconds)`;
  app.get('/log/stat', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: { tags, summary: statSummary('Usage stats of every user'), querystring: querystring(adminFilters) },
    handler: stat(true),
  });
  app.get('/log/self/stat', {
    preValidation: dropEmptyQuery,
    preHandler: guards.user,
    schema: { tags, summary: statSummary('Usage stats of the signed-in user'), querystring: querystring(userFilters) },
    handler: stat(false),
  });

  app.delete<{ Querystring: { target_timestamp?: number } }>(
    '/log/',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.admin,
      schema: {
        tags,
        summary: 'Delete every log created before target_timestamp (in batches); data is how many were deleted',
        querystring: querystring({ target_timestamp: seconds('Delete logs created before this time (Unix seconds)') }),
      },
    },
    async (request) => ok(await logs.deleteBefore(request.query.target_timestamp ?? 0)),
  );

  const exportCsv =
    (admin: boolean) => async (request: FastifyRequest<{ Querystring: FilterQuery }>, reply: FastifyReply) => {
      const chunks = logs.exportCsv(filtersOf(request.query, admin), actor(request));
      // The first chunk (header and first batch) is read before the 200 goes out: a query the store
      // refuses is answered in the envelope instead of cutting the connection after the header.
      const first = await chunks.next();
      const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="logs-${stamp}.csv"`)
        .send(Readable.from(resume(first, chunks), { objectMode: false }));
    };
  const exportSummary = (who: string) =>
    `${who} as CSV (text/csv, UTF-8 with BOM, streamed), same filters as the list, newest first; cost_usd is quota / QuotaPerUnit`;
  app.get('/log/export', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: { tags, summary: exportSummary("Every user's usage logs"), querystring: querystring(adminFilters) },
    handler: exportCsv(true),
  });
  app.get('/log/self/export', {
    preValidation: dropEmptyQuery,
    preHandler: guards.user,
    schema: { tags, summary: exportSummary("The signed-in user's usage logs"), querystring: querystring(userFilters) },
    handler: exportCsv(false),
  });

  const dataRange = {
    start_timestamp: seconds('First hour bucket to include (Unix seconds)'),
    end_timestamp: seconds('Last hour bucket to include (Unix seconds)'),
  };
  type DataQuery = { username?: string; start_timestamp: number; end_timestamp: number };
  const data = async (request: FastifyRequest<{ Querystring: DataQuery }>) =>
    ok(await logs.quotaData(request.query, actor(request)));
  app.get('/data/', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: {
      tags: ['data'],
      summary:
        'Hourly usage buckets: one user (by username) as stored, or every user summed per model and hour {model_name, created_at, count, quota, token_used}',
      querystring: {
        type: 'object',
        required: ['start_timestamp', 'end_timestamp'],
        properties: { ...dataRange, username: shortText('Only this user (exact username)', 64) },
      },
    },
    handler: data,
  });
  for (const url of ['/data/self', '/data/self/']) {
    app.get(url, {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: {
        tags: ['data'],
        summary: "The signed-in user's hourly usage buckets, at most 30 days at a time",
        querystring: { type: 'object', required: ['start_timestamp', 'end_timestamp'], properties: dataRange },
        ...(url.endsWith('/') ? { hide: true } : {}),
      },
      handler: data,
    });
  }
}

/** The chunks of a generator whose first step was already taken. */
async function* resume<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

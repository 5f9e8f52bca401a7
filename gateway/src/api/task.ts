import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MidjourneyFilters, TaskFilters, TaskService } from '../domain/tasks/index.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { dropEmptyQuery } from './query.ts';
import { text } from './schemas.ts';

export interface TaskRouteDeps {
  guards: ReturnType<typeof authGuards>;
  tasks: TaskService;
}

const shortText = (description: string, maxLength = 256) => text(description, maxLength);
const time = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;
const channel = { type: 'integer', minimum: 0, description: 'Channel id' } as const;

const midjourneyFilters = {
  mj_id: shortText('Upstream task id, exact'),
  start_timestamp: time('Submitted at or after this time (Unix MILLISECONDS)'),
  end_timestamp: time('Submitted at or before this time (Unix MILLISECONDS)'),
} as const;

const taskFilters = {
  task_id: shortText('Task id, exact'),
  platform: shortText('Platform, e.g. suno', 64),
  action: shortText('Action, e.g. MUSIC or LYRICS', 64),
  status: shortText('Status, e.g. SUCCESS, FAILURE, IN_PROGRESS', 64),
  start_timestamp: time('Submitted at or after this time (Unix SECONDS)'),
  end_timestamp: time('Submitted at or before this time (Unix SECONDS)'),
} as const;

const querystring = (properties: object) => ({ type: 'object', properties }) as const;
const summary = (what: string, who: string) =>
  `${what} of ${who}, newest submitted first: {items, total, page, page_size, total_estimated}`;

/** /api/mj/* and /api/task/*: the drawing log (ms timestamps) and the creative task log (s timestamps). */
export function taskRoutes(app: FastifyInstance, deps: TaskRouteDeps): void {
  const { guards, tasks } = deps;
  const actor = (request: FastifyRequest) => signedIn(request).user;

  type MjQuery = PagingInput & Omit<MidjourneyFilters, 'id' | 'user_id'>;
  const midjourney = (admin: boolean) => async (request: FastifyRequest<{ Querystring: MjQuery }>) => {
    const { page, pageSize, offset } = paging(request.query);
    const q = request.query;
    const filters: MidjourneyFilters = {
      mj_id: q.mj_id,
      start_timestamp: q.start_timestamp,
      end_timestamp: q.end_timestamp,
      ...(admin ? { channel_id: q.channel_id } : {}),
    };
    const result = await tasks.listMidjourney({ filters, offset, limit: pageSize }, actor(request));
    return ok({ ...pageOf(result.items, result.total, page, pageSize), total_estimated: result.totalEstimated });
  };

  type TaskQuery = PagingInput & Omit<TaskFilters, 'id' | 'user_id'>;
  const creative = (admin: boolean) => async (request: FastifyRequest<{ Querystring: TaskQuery }>) => {
    const { page, pageSize, offset } = paging(request.query);
    const q = request.query;
    const filters: TaskFilters = {
      task_id: q.task_id,
      platform: q.platform,
      action: q.action,
      status: q.status,
      start_timestamp: q.start_timestamp,
      end_timestamp: q.end_timestamp,
      ...(admin ? { channel_id: q.channel_id } : {}),
    };
    const result = await tasks.listTasks({ filters, offset, limit: pageSize }, actor(request));
    return ok({ ...pageOf(result.items, result.total, page, pageSize), total_estimated: result.totalEstimated });
  };

  app.get<{ Querystring: MjQuery }>('/mj/', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: {
      tags: ['midjourney'],
      summary: summary('Drawing tasks', 'every user'),
      querystring: querystring({ ...pagingQuery, ...midjourneyFilters, channel_id: channel }),
    },
    handler: midjourney(true),
  });
  for (const url of ['/mj/self', '/mj/self/']) {
    app.get<{ Querystring: MjQuery }>(url, {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: {
        tags: ['midjourney'],
        summary: summary('Drawing tasks', 'the signed-in user'),
        querystring: querystring({ ...pagingQuery, ...midjourneyFilters }),
        ...(url.endsWith('/') ? { hide: true } : {}),
      },
      handler: midjourney(false),
    });
  }

  app.get<{ Querystring: TaskQuery }>('/task/', {
    preValidation: dropEmptyQuery,
    preHandler: guards.admin,
    schema: {
      tags: ['task'],
      summary: summary('Creative tasks (private billing data never included)', 'every user'),
      querystring: querystring({ ...pagingQuery, ...taskFilters, channel_id: channel }),
    },
    handler: creative(true),
  });
  for (const url of ['/task/self', '/task/self/']) {
    app.get<{ Querystring: TaskQuery }>(url, {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: {
        tags: ['task'],
        summary: summary('Creative tasks (private billing data never included)', 'the signed-in user'),
        querystring: querystring({ ...pagingQuery, ...taskFilters }),
        ...(url.endsWith('/') ? { hide: true } : {}),
      },
      handler: creative(false),
    });
  }
}

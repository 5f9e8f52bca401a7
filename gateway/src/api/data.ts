import type { FastifyInstance } from 'fastify';
import type { DashboardDataService, TimeRange } from '../domain/dashboard/service.ts';
import { type authGuards, signedIn } from './auth.ts';
import { ok } from './envelope.ts';
import { dropEmptyQuery } from './query.ts';
import { text } from './schemas.ts';

export interface DataRouteDeps {
  guards: ReturnType<typeof authGuards>;
  dashboard: DashboardDataService;
}

const tags = ['data'];
const seconds = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;
const range = {
  start_timestamp: seconds('Start of the range (Unix seconds)'),
  end_timestamp: seconds('End of the range, included (Unix seconds)'),
};
const rangeQuery = (extra: object = {}) =>
  ({
    type: 'object',
    required: ['start_timestamp', 'end_timestamp'],
    properties: { ...range, ...extra },
  }) as const;

/** /api/data/users and /api/data/flow[/self]: the dashboard's consumption by user and its model flow. */
export function dataRoutes(app: FastifyInstance, { guards, dashboard }: DataRouteDeps): void {
  app.get<{ Querystring: TimeRange }>(
    '/data/users',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.admin,
      schema: {
        tags,
        summary:
          'Consumption by user: hourly buckets summed per username {username, created_at, count, quota, token_used}',
        querystring: rangeQuery(),
      },
    },
    async (request) => ok(await dashboard.byUser(request.query)),
  );
  app.get<{ Querystring: TimeRange & { username?: string } }>(
    '/data/flow',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.admin,
      schema: {
        tags,
        summary:
          'Model flow of every user (consume logs): {user_id, username, use_group, model_name, channel_id, channel_name, count, quota, token_used}, largest first',
        querystring: rangeQuery({ username: text('Only this user (exact username)', 64) }),
      },
    },
    async (request) => ok(await dashboard.flow(request.query)),
  );
  app.get<{ Querystring: TimeRange }>(
    '/data/flow/self',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: {
        tags,
        summary:
          "The signed-in user's model flow by token, at most 30 days at a time: {token_id, token_name, use_group, model_name, count, quota, token_used}",
        querystring: rangeQuery(),
      },
    },
    async (request) => ok(await dashboard.selfFlow(request.query, signedIn(request).user.id)),
  );
}

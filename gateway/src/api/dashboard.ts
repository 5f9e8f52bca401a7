import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Turnstile } from '../domain/accounts/turnstile.ts';
import type { CheckinService } from '../domain/checkins/index.ts';
import type { UptimeService } from '../domain/uptime/index.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';

export interface DashboardRouteDeps {
  guards: ReturnType<typeof authGuards>;
  turnstile: Turnstile;
  checkins: CheckinService;
  uptime: UptimeService;
}

const tags = ['checkin'];
const turnstileQuery = { type: 'object', properties: { turnstile: { type: 'string', maxLength: 4096 } } } as const;

/** What the dashboard adds (issue 19): daily check-in (/api/user/checkin) and the Uptime Kuma panel (/api/uptime/status), as new-api serves them. */
export function dashboardRoutes(app: FastifyInstance, deps: DashboardRouteDeps): void {
  const { guards, checkins, uptime } = deps;

  app.get<{ Querystring: { month?: string } }>(
    '/user/checkin',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary: 'Check-in settings and the signed-in user’s check-ins of a month',
        querystring: {
          type: 'object',
          properties: { month: { type: 'string', maxLength: 16, description: 'YYYY-MM; default: this month' } },
        },
      },
    },
    async (request) => {
      const stats = await checkins.stats(signedIn(request).user.id, request.query.month);
      return ok({ ...checkins.settings(), stats });
    },
  );

  // Turnstile, when on, keeps scripts from collecting rewards for many accounts (new-api checks it here too).
  const human = async (request: FastifyRequest) =>
    deps.turnstile.check((request.query as { turnstile?: string }).turnstile, request.ip);
  app.post<{ Querystring: { turnstile?: string } }>(
    '/user/checkin',
    {
      preHandler: [guards.user, human],
      schema: { tags, summary: 'Check in for today; answers the reward', querystring: turnstileQuery },
    },
    async (request) => {
      const record = await checkins.checkIn(signedIn(request).user);
      return ok(record, say(request, { zh: '签到成功', en: 'Checked in' }));
    },
  );

  app.get(
    '/uptime/status',
    { schema: { tags, summary: 'Monitors of the configured Uptime Kuma status pages (public)' } },
    async () => ok(await uptime.status()),
  );
}

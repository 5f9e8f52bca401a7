import type { FastifyInstance } from 'fastify';
import type { SetupInput, SetupService } from '../domain/setup.ts';
import { ok, say } from './envelope.ts';

const setupBody = {
  type: 'object',
  properties: {
    username: { type: 'string', maxLength: 1024 },
    password: { type: 'string', maxLength: 1024 },
    confirmPassword: { type: 'string', maxLength: 1024 },
    SelfUseModeEnabled: { type: 'boolean' },
    DemoSiteEnabled: { type: 'boolean' },
  },
} as const;

export function setupRoutes(app: FastifyInstance, setup: SetupService): void {
  app.get('/setup', async () => ok(await setup.status()));

  app.post<{ Body: SetupInput }>('/setup', { schema: { body: setupBody } }, async (request) => {
    await setup.run(request.body ?? {});
    return ok(undefined, say(request, { zh: '系统初始化成功', en: 'System initialized successfully' }));
  });
}

import type { FastifyInstance } from 'fastify';
import type { SetupService } from '../domain/setup.ts';
import type { StatusService } from '../domain/status.ts';
import { setupRoutes } from './setup.ts';
import { statusRoutes } from './status.ts';

export interface ApiDeps {
  setup: SetupService;
  status: StatusService;
}

/** The /api/* routes in new-api's shapes; registered under the /api prefix. */
export async function apiPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  // The console and scripts must always see fresh answers (spec doc 1 §1: every call asks for no caching).
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  statusRoutes(app, deps.status);
  setupRoutes(app, deps.setup);
}

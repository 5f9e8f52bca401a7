import type { FastifyInstance } from 'fastify';
import type { StatusService } from '../domain/status.ts';
import { ok } from './envelope.ts';

export function statusRoutes(app: FastifyInstance, status: StatusService): void {
  app.get('/status', async () => ok(await status.publicStatus()));
}

import type { FastifyInstance } from 'fastify';
import type { OptionsService } from '../domain/options/index.ts';
import type { StatusService } from '../domain/status.ts';
import { ok } from './envelope.ts';

/** Public texts the console shows as they are (reference §2.1 "content options"): path → option key. */
const CONTENT_OPTIONS = {
  '/notice': 'Notice',
  '/about': 'About',
  '/home_page_content': 'HomePageContent',
  '/user-agreement': 'legal.user_agreement',
  '/privacy-policy': 'legal.privacy_policy',
} as const;

export function statusRoutes(app: FastifyInstance, status: StatusService, options: OptionsService): void {
  app.get('/status', async () => ok(await status.publicStatus()));

  // The administrator's texts (HTML, Markdown or a URL to frame), empty when unset.
  for (const [path, key] of Object.entries(CONTENT_OPTIONS)) {
    app.get(path, async () => ok(options.get(key)));
  }
}

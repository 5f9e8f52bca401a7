import type { FastifyInstance } from 'fastify';
import type { PrefillGroupInput, PrefillGroupService } from '../domain/prefill-groups/service.ts';
import { PREFILL_GROUP_TYPES } from '../domain/prefill-groups/service.ts';
import type { authGuards } from './auth.ts';
import { ok } from './envelope.ts';
import { dropEmptyQuery } from './query.ts';
import { idParams, text } from './schemas.ts';

export interface PrefillGroupRouteDeps {
  guards: ReturnType<typeof authGuards>;
  prefillGroups: PrefillGroupService;
}

const tags = ['prefill_group'];

const groupBody = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 0, description: 'The group to change (PUT only)' },
    name: text('Unique name', 64),
    type: { type: 'string', enum: [...PREFILL_GROUP_TYPES], description: 'model, tag or endpoint' },
    items: {
      anyOf: [
        { type: 'array', maxItems: 5000, items: { type: 'string', maxLength: 256 } },
        { type: 'string', maxLength: 65536 },
      ],
      description: 'Model and tag groups: a list of names; endpoint groups: the endpoint map as JSON text',
    },
    description: text('Shown beside the name', 255),
  },
} as const;

/** /api/prefill_group (administrators): the lists the channel editor prefills models, tags or endpoints from. */
export function prefillGroupRoutes(app: FastifyInstance, { guards, prefillGroups }: PrefillGroupRouteDeps): void {
  for (const url of ['/prefill_group', '/prefill_group/']) {
    const hide = url.endsWith('/') ? { hide: true } : {};
    app.get<{ Querystring: { type?: string } }>(
      url,
      {
        preValidation: dropEmptyQuery,
        preHandler: guards.admin,
        schema: {
          tags,
          summary: 'Every prefill group, or those of one type, oldest first',
          querystring: {
            type: 'object',
            properties: { type: { type: 'string', enum: [...PREFILL_GROUP_TYPES], description: 'Only this type' } },
          },
          ...hide,
        },
      },
      async (request) => ok(await prefillGroups.list(request.query.type)),
    );
    app.post<{ Body: PrefillGroupInput }>(
      url,
      {
        preHandler: guards.admin,
        schema: { tags, summary: 'Create a prefill group; data is the group', body: groupBody, ...hide },
      },
      async (request) => ok(await prefillGroups.create(request.body ?? {})),
    );
    app.put<{ Body: PrefillGroupInput }>(
      url,
      {
        preHandler: guards.admin,
        schema: { tags, summary: 'Change a prefill group (by id); data is the group', body: groupBody, ...hide },
      },
      async (request) => ok(await prefillGroups.update(request.body ?? {})),
    );
  }
  app.delete<{ Params: { id: number } }>(
    '/prefill_group/:id',
    {
      preHandler: guards.admin,
      schema: { tags, summary: 'Delete a prefill group', params: idParams('Prefill group id') },
    },
    async (request) => {
      await prefillGroups.delete(request.params.id);
      return ok();
    },
  );
}

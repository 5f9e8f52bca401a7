import { tokenFields } from '../../api/token.ts';
import type { TokenCreate, TokenService, TokenUpdate } from '../../domain/tokens/index.ts';
import { field, typed } from '../fields.ts';
import { idsFilter, numberFilter, type RestResource, textFilter } from '../resource.ts';

/** The console's `token` resource: the signed-in user's own API keys. */
export function tokenResource(tokens: TokenService): RestResource {
  return {
    guard: 'user',
    list(query, actor) {
      const f = query.filters;
      return tokens.list(
        {
          ...query,
          filters: {
            keyword: textFilter(f, 'q') ?? textFilter(f, 'keyword'),
            name: textFilter(f, 'name'),
            token: textFilter(f, 'token'),
            status: numberFilter(f, 'status'),
            group: textFilter(f, 'group'),
            id: idsFilter(f),
          },
        },
        actor,
      );
    },
    getOne: (id, actor) => tokens.get(id, actor),
    async create(data, actor) {
      const [created] = await tokens.create({ ...typed<TokenCreate>(data, tokenFields), count: 1 }, actor);
      return created!;
    },
    async update(id, data, actor) {
      const before = await tokens.get(id, actor);
      const status = field(data, 'status', 'number');
      // The status goes in the same write as the fields: a refused status leaves the fields unchanged too.
      const changed = status !== undefined && status !== before.status ? status : undefined;
      return tokens.update({ ...typed<TokenUpdate>(data, tokenFields), id, status: changed }, actor);
    },
    async delete(id, actor) {
      const before = await tokens.get(id, actor);
      await tokens.delete(id, actor);
      return before;
    },
  };
}

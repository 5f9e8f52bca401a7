import { codeFields } from '../../api/redemption.ts';
import type { RedemptionCreate, RedemptionService, RedemptionUpdate } from '../../domain/redemptions/index.ts';
import { field, typed } from '../fields.ts';
import { idsFilter, numberFilter, type RestResource, textFilter } from '../resource.ts';

/** The console's `redemption` resource: redemption codes, for administrators. */
export function redemptionResource(redemptions: RedemptionService): RestResource {
  return {
    guard: 'admin',
    list(query, actor) {
      const f = query.filters;
      return redemptions.list(
        {
          ...query,
          filters: {
            keyword: textFilter(f, 'q') ?? textFilter(f, 'keyword'),
            name: textFilter(f, 'name'),
            status: numberFilter(f, 'status'),
            used_user_id: numberFilter(f, 'used_user_id'),
            id: idsFilter(f),
          },
        },
        actor,
      );
    },
    getOne: (id, actor) => redemptions.get(id, actor),
    async create(data, actor) {
      const [created] = await redemptions.create({ ...typed<RedemptionCreate>(data, codeFields), count: 1 }, actor);
      return created!;
    },
    async update(id, data, actor) {
      const before = await redemptions.get(id, actor);
      const status = field(data, 'status', 'number');
      const edited = { ...typed<RedemptionUpdate>(data, codeFields), id };
      // A status-only change (enable/disable) must not trip the "only unused codes can be edited" rule.
      const changesFields = (['name', 'quota', 'expired_time'] as const).some(
        (key) => edited[key] !== undefined && edited[key] !== before[key],
      );
      const newStatus = status !== undefined && status !== before.status ? status : undefined;
      // Fields and status in one write, so a refused status leaves the fields unchanged too.
      if (changesFields) return redemptions.update({ ...edited, status: newStatus }, actor);
      return newStatus === undefined ? before : redemptions.setStatus(id, newStatus, actor);
    },
    async delete(id, actor) {
      const before = await redemptions.get(id, actor);
      await redemptions.delete(id, actor);
      return before;
    },
  };
}

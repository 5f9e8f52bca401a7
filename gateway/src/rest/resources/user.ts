import type { UserAdminService } from '../../domain/accounts/admin.ts';
import type { ManageAction } from '../../domain/accounts/permissions.ts';
import { ROLE, USER_STATUS } from '../../domain/accounts/rules.ts';
import { userView } from '../../domain/accounts/view.ts';
import type { Keyring } from '../../domain/keyring.ts';
import { PERIOD_LIMIT_FIELDS } from '../../domain/ledger/periods/limits.ts';
import { checkListQuery } from '../../domain/list-query.ts';
import type { UserRow } from '../../store/database.ts';
import { USER_SORT_FIELDS } from '../../store/repositories/users.ts';
import { field } from '../fields.ts';
import { idsFilter, numberFilter, type RestResource, textFilter } from '../resource.ts';

/** The console's `user` resource: user management for administrators, with every rule of the domain. */
export function userResource(admin: UserAdminService, keyring: Keyring): RestResource {
  const view = (user: UserRow) => userView(user, keyring);
  return {
    guard: 'admin',
    async list(query) {
      const { field: sortField, order, offset, limit } = checkListQuery(query, USER_SORT_FIELDS, 'id');
      const f = query.filters;
      const { items, total } = await admin.search({
        keyword: textFilter(f, 'q') ?? textFilter(f, 'keyword'),
        group: textFilter(f, 'group'),
        ids: idsFilter(f),
        role: numberFilter(f, 'role'),
        status: numberFilter(f, 'status'),
        sort: { field: sortField, order },
        offset,
        limit,
      });
      return { items: items.map(view), total };
    },
    async getOne(id, actor) {
      return view(await admin.get(actor, id));
    },
    async create(data, actor) {
      return view(
        await admin.create(actor, {
          username: field(data, 'username', 'string'),
          display_name: field(data, 'display_name', 'string'),
          password: field(data, 'password', 'string'),
          role: field(data, 'role', 'number'),
        }),
      );
    },
    async update(id, data, actor) {
      const before = await admin.get(actor, id);
      // Role and status change only through the manage actions, so their rules apply here too; they are
      // written in the same transaction as the other fields, so a refused one changes nothing.
      const user = await admin.update(actor, {
        id,
        username: field(data, 'username', 'string'),
        display_name: field(data, 'display_name', 'string'),
        password: field(data, 'password', 'string'),
        group: field(data, 'group', 'string'),
        quota: field(data, 'quota', 'number'),
        remark: field(data, 'remark', 'string'),
        ...Object.fromEntries(PERIOD_LIMIT_FIELDS.map((name) => [name, field(data, name, 'number')])),
        // react-admin sends the record back whole: the limits as shown, or as edited.
        rate_limits: data.rate_limits ?? undefined,
        manage: manageActions(before, field(data, 'role', 'number'), field(data, 'status', 'number')),
      });
      return view(user);
    },
    async sensitiveUpdate(id, data, actor) {
      const quota = field(data, 'quota', 'number');
      return quota !== undefined && quota !== (await admin.get(actor, id)).quota;
    },
    async delete(id, actor) {
      const before = await admin.get(actor, id);
      await admin.manage(actor, id, 'delete');
      return view(before);
    },
  };
}

function manageActions(user: UserRow, role: number | undefined, status: number | undefined): ManageAction[] {
  const actions: ManageAction[] = [];
  if (role !== undefined && role !== user.role) actions.push(role >= ROLE.admin ? 'promote' : 'demote');
  if (status !== undefined && status !== user.status)
    actions.push(status === USER_STATUS.enabled ? 'enable' : 'disable');
  return actions;
}

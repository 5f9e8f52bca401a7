import type { Kysely, Transaction } from 'kysely';
import type { Database, NewUser, UserRow } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export const ROLE = { user: 1, admin: 10, root: 100 } as const;
export const USER_STATUS = { enabled: 1, disabled: 2 } as const;

export function findRootUser(db: Db): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('role', '>=', ROLE.root)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .executeTakeFirst();
}

export function insertUser(db: Db, user: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

import type { Kysely } from 'kysely';
import { AppError, defineErrors } from '../errors.ts';
import type { Database } from '../store/database.ts';
import type { StoreKind } from '../store/open.ts';
import { isSetupDone, markSetupDone } from '../store/repositories/setups.ts';
import { findUserWithRoleAtLeast, insertUser } from '../store/repositories/users.ts';
import { hashPassword, PASSWORD_MAX_BYTES } from './accounts/password.ts';
import { PASSWORD_MIN_LENGTH, ROLE, USERNAME_MAX_LENGTH } from './accounts/rules.ts';

export const SETUP_ERRORS = defineErrors({
  SETUP_ALREADY_DONE: {
    status: 409,
    message: { zh: '系统已经初始化完成', en: 'The system has already been initialized' },
  },
  SETUP_USERNAME_REQUIRED: {
    status: 400,
    message: { zh: '请输入管理员用户名', en: 'Please enter the admin username' },
  },
  SETUP_USERNAME_TOO_LONG: {
    status: 400,
    message: { zh: '用户名长度不能超过 {max} 个字符', en: 'The username must be at most {max} characters long' },
  },
  SETUP_PASSWORD_TOO_SHORT: {
    status: 400,
    message: { zh: '密码长度至少为 {min} 个字符', en: 'Password must be at least {min} characters long' },
  },
  SETUP_PASSWORD_TOO_LONG: {
    status: 400,
    message: { zh: '密码长度不能超过 {max} 字节', en: 'The password must be at most {max} bytes long' },
  },
  SETUP_PASSWORD_MISMATCH: {
    status: 400,
    message: { zh: '两次输入的密码不一致', en: 'The two passwords entered do not match' },
  },
  SETUP_USAGE_MODE_CONFLICT: {
    status: 400,
    message: {
      zh: '自用模式和演示站点模式不能同时开启',
      en: 'Self-use mode and demo-site mode cannot both be enabled',
    },
  },
});

export const ROOT_INITIAL_QUOTA = 100_000_000;

export interface SetupInput {
  username?: string | undefined;
  password?: string | undefined;
  confirmPassword?: string | undefined;
  SelfUseModeEnabled?: boolean | undefined;
  DemoSiteEnabled?: boolean | undefined;
}

export interface SetupStatus {
  status: boolean;
  root_init: boolean;
  database_type: string;
}

/**
 * The database named as new-api's front ends know them ('sqlite', 'mysql', 'postgres'). The embedded
 * PGlite answers 'sqlite': like new-api's SQLite it lives in a local folder, so those front ends (and
 * ours) warn that a container must keep that folder or lose the data.
 */
export function databaseTypeName(kind: StoreKind): 'sqlite' | 'postgres' {
  return kind === 'pglite' ? 'sqlite' : 'postgres';
}

/** Writes the usage-mode options; supplied by the options service so setup stays ignorant of caching. */
export type SaveOptions = (entries: Record<string, string>) => Promise<void>;

const nowSeconds = () => Math.floor(Date.now() / 1000);
type Db = Parameters<typeof findUserWithRoleAtLeast>[0];
const findRootUser = (db: Db) => findUserWithRoleAtLeast(db, ROLE.root);

/**
 * First-run setup (spec doc 1 §2, §5): creates the root administrator unless one exists,
 * records the usage mode, and can happen once only — even when two requests race.
 */
export class SetupService {
  readonly #db: Kysely<Database>;
  readonly #databaseType: StoreKind;
  readonly #version: string;
  readonly #saveOptions: SaveOptions;
  /** Setup never reverts, so once seen it is remembered instead of asked again. */
  #done = false;

  constructor(deps: { db: Kysely<Database>; databaseType: StoreKind; version: string; saveOptions: SaveOptions }) {
    this.#db = deps.db;
    this.#databaseType = deps.databaseType;
    this.#version = deps.version;
    this.#saveOptions = deps.saveOptions;
  }

  async isDone(): Promise<boolean> {
    if (!this.#done) this.#done = await isSetupDone(this.#db);
    return this.#done;
  }

  async status(): Promise<SetupStatus> {
    const [done, root] = await Promise.all([this.isDone(), findRootUser(this.#db)]);
    return { status: done, root_init: root !== undefined, database_type: databaseTypeName(this.#databaseType) };
  }

  /** A database upgraded from an older install has a root user but no setup record: adopt it. */
  async adoptExistingRoot(): Promise<void> {
    if (await this.isDone()) return;
    if (await findRootUser(this.#db)) await markSetupDone(this.#db, this.#version, nowSeconds());
  }

  async run(input: SetupInput): Promise<void> {
    if (await this.isDone()) throw new AppError(SETUP_ERRORS.SETUP_ALREADY_DONE);
    const selfUse = input.SelfUseModeEnabled === true;
    const demo = input.DemoSiteEnabled === true;
    if (selfUse && demo) throw new AppError(SETUP_ERRORS.SETUP_USAGE_MODE_CONFLICT);

    const rootExists = (await findRootUser(this.#db)) !== undefined;
    const root = rootExists ? undefined : await validatedRoot(input);

    await this.#db.transaction().execute(async (trx) => {
      if (!(await markSetupDone(trx, this.#version, nowSeconds()))) {
        throw new AppError(SETUP_ERRORS.SETUP_ALREADY_DONE);
      }
      if (root && !(await findRootUser(trx))) {
        await insertUser(trx, {
          username: root.username,
          display_name: root.username,
          password: root.passwordHash,
          role: ROLE.root,
          quota: ROOT_INITIAL_QUOTA,
          created_at: nowSeconds(),
        });
      }
    });
    this.#done = true;
    await this.#saveOptions({ SelfUseModeEnabled: String(selfUse), DemoSiteEnabled: String(demo) });
  }
}

async function validatedRoot(input: SetupInput): Promise<{ username: string; passwordHash: string }> {
  const username = input.username?.trim() ?? '';
  if (username === '') throw new AppError(SETUP_ERRORS.SETUP_USERNAME_REQUIRED);
  if ([...username].length > USERNAME_MAX_LENGTH) {
    throw new AppError(SETUP_ERRORS.SETUP_USERNAME_TOO_LONG, { max: USERNAME_MAX_LENGTH });
  }
  const password = input.password ?? '';
  if ([...password].length < PASSWORD_MIN_LENGTH) {
    throw new AppError(SETUP_ERRORS.SETUP_PASSWORD_TOO_SHORT, { min: PASSWORD_MIN_LENGTH });
  }
  if (Buffer.byteLength(password) > PASSWORD_MAX_BYTES) {
    throw new AppError(SETUP_ERRORS.SETUP_PASSWORD_TOO_LONG, { max: PASSWORD_MAX_BYTES });
  }
  if (input.confirmPassword !== password) throw new AppError(SETUP_ERRORS.SETUP_PASSWORD_MISMATCH);
  return { username, passwordHash: await hashPassword(password) };
}

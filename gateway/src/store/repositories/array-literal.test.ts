import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import { migrateToLatest, openStore, type Store } from '../index.ts';
import { booleanArrayLiteral, integerArrayLiteral, textArrayLiteral } from './array-literal.ts';

const AWKWARD = [
  '',
  ' ',
  'NULL',
  'null',
  'a,b',
  '{x}',
  'say "hi"',
  'back\\slash',
  '\\"',
  'tab\tnew\nline\r',
  'ünïcødé 🚀',
  ' padded ',
  '"',
  '\\',
];

/** Each literal read back by the database is the values it was built from. */
function roundTrips(open: () => Promise<{ store: Store; close(): Promise<void> }>) {
  let opened: { store: Store; close(): Promise<void> };
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(() => opened.close());

  it('text, including quotes, backslashes, commas, braces, NULL and empty strings', async () => {
    const { rows } = await sql<{ v: string[] }>`select ${textArrayLiteral(AWKWARD)}::text[] as v`.execute(
      opened.store.db,
    );
    expect(rows[0]!.v).toEqual(AWKWARD);
  });

  it('integers up to the safe range, and booleans', async () => {
    const ints = [0, 1, -1, 2_147_483_647, Number.MAX_SAFE_INTEGER];
    const { rows } = await sql<{ i: Array<number | string>; b: boolean[]; e: number[] }>`select
        ${integerArrayLiteral(ints)}::int8[] as i, ${booleanArrayLiteral([true, false, true])}::bool[] as b,
        ${integerArrayLiteral([])}::int4[] as e`.execute(opened.store.db);
    // Postgres' driver leaves int8 inside arrays as strings; the values are what count.
    expect({ ...rows[0], i: rows[0]!.i.map(Number) }).toEqual({ i: ints, b: [true, false, true], e: [] });
  });
}

describe('array literals on the embedded database', () => {
  roundTrips(async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    return { store, close: () => store.close() };
  });
});

describe.skipIf(!hasPostgres())('array literals on Postgres', () => {
  roundTrips(async () => {
    const { store, dispose } = await createTestStore();
    return { store, close: dispose };
  });
});

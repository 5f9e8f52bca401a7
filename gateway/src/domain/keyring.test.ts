import { afterAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../tests/support/database.ts';
import { Keyring } from './keyring.ts';

describe('keyring', () => {
  const stores: Array<Awaited<ReturnType<typeof createTestStore>>> = [];
  afterAll(async () => {
    for (const s of stores) await s.dispose();
  });

  it('round-trips encrypted values and refuses tampered or foreign ones', () => {
    const keyring = new Keyring('a-long-enough-master-secret');
    const sealed = keyring.encrypt('sk-upstream-key');
    expect(sealed).not.toContain('sk-upstream-key');
    expect(keyring.encrypt('sk-upstream-key')).not.toBe(sealed);
    expect(keyring.decrypt(sealed)).toBe('sk-upstream-key');
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    expect(() => keyring.decrypt(tampered)).toThrow();
    expect(() => new Keyring('another-master-secret').decrypt(sealed)).toThrow();
    expect(() => keyring.decrypt('plain')).toThrow(/not an encrypted value/);
  });

  it('gives stable HMACs that depend on the master secret', () => {
    const a = new Keyring('a-long-enough-master-secret');
    expect(a.hmac('key')).toBe(new Keyring('a-long-enough-master-secret').hmac('key'));
    expect(a.hmac('key')).not.toBe(a.hmac('key2'));
    expect(a.hmac('key')).not.toBe(new Keyring('another-master-secret').hmac('key'));
  });

  it('generates one master secret per database, the same for every pod', async () => {
    const created = await createTestStore();
    stores.push(created);
    const { store } = created;
    const [one, two] = await Promise.all([Keyring.load(store.db, undefined), Keyring.load(store.db, undefined)]);
    expect(one.generated).toBe(true);
    expect(one.keyring.hmac('x')).toBe(two.keyring.hmac('x'));
    expect(two.keyring.decrypt(one.keyring.encrypt('shared'))).toBe('shared');
    const configured = await Keyring.load(store.db, 'configured-secret-value');
    expect(configured.generated).toBe(false);
    expect(configured.keyring.hmac('x')).not.toBe(one.keyring.hmac('x'));
  });
});

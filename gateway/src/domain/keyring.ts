import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import { getOrCreateInstanceSecret } from '../store/repositories/instance-secrets.ts';

const ENCRYPTED_PREFIX = 'v1:';

/**
 * Keys derived from one master secret: an HMAC key, so API keys and access tokens are looked up by
 * digest and never stored in the clear, and an AES-256-GCM key for secrets that must be read back
 * (channel keys, webhook secrets).
 */
export class Keyring {
  /** A key object, made once: building one from raw bytes on every lookup costs more than the HMAC. */
  readonly #hmacKey: KeyObject;
  readonly #encryptionKey: Buffer;
  /** Kept only so that text shown to users can be masked of it (relay/secrets). */
  readonly #master: string;

  constructor(masterSecret: string) {
    this.#master = masterSecret;
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', masterSecret, 'tollgate', purpose, 32));
    this.#hmacKey = createSecretKey(derive('lookup-hmac'));
    this.#encryptionKey = derive('at-rest-encryption');
  }

  /**
   * From SECRET_KEY when configured; otherwise a key generated once and kept in the database, so that
   * every pod agrees without configuration (at the price of keeping key and data together).
   */
  static async load(
    db: Kysely<Database>,
    configured: string | undefined,
  ): Promise<{ keyring: Keyring; generated: boolean }> {
    if (configured) return { keyring: new Keyring(configured), generated: false };
    const master = await getOrCreateInstanceSecret(db, 'master', () => randomBytes(32).toString('base64url'));
    return { keyring: new Keyring(master), generated: true };
  }

  /** The master secret, for the secret mask only: never sent or logged. */
  masterSecret(): string {
    return this.#master;
  }

  hmac(value: string): string {
    return createHmac('sha256', this.#hmacKey).update(value).digest('base64url');
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#encryptionKey, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ENCRYPTED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Throws if the text was not produced by `encrypt` with this keyring (tampered, or another key). */
  decrypt(text: string): string {
    if (!text.startsWith(ENCRYPTED_PREFIX)) throw new Error('not an encrypted value');
    const raw = Buffer.from(text.slice(ENCRYPTED_PREFIX.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#encryptionKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

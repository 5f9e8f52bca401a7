import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/**
 * A WebAuthn authenticator in software, for API tests: P-256 keys from node:crypto, authenticator data
 * and a `none` attestation encoded in CBOR as real authenticators send them, and signed assertions.
 * Each ceremony answers with the JSON a browser's PublicKeyCredential.toJSON() gives.
 */

// --- a minimal CBOR encoder (RFC 8949): unsigned and negative integers, byte and text strings, maps ---

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(length, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  const parts = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return Buffer.concat(parts);
}

// --- the authenticator ---

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

interface Held {
  id: Buffer;
  privateKey: KeyObject;
  coseKey: Buffer;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** What a ceremony may be told to do differently from a well-behaved browser and authenticator. */
export interface CeremonyTwist {
  /** The origin the "browser" reports (default: the authenticator's). */
  origin?: string;
  /** The RP id the authenticator signs for (default: the options' or the authenticator's). */
  rpId?: string;
  /** The signature counter to report, instead of the next one. */
  counter?: number;
  /** Whether the user was verified (default: true). */
  userVerified?: boolean;
  /** Sign with this credential (by id) rather than the one the options allow; at creation, register it again. */
  credentialId?: string;
}

export class SoftwareAuthenticator {
  readonly origin: string;
  readonly rpId: string;
  readonly #held: Held[] = [];

  constructor(origin: string) {
    this.origin = origin;
    this.rpId = new URL(origin).hostname;
  }

  /** Answers navigator.credentials.create({publicKey}) with the options' JSON (`data.options.publicKey`). */
  create(options: PublicKeyOptions, twist: CeremonyTwist = {}) {
    const again = this.#held.find((h) => b64url(h.id) === twist.credentialId);
    if (twist.credentialId !== undefined && !again) throw new Error('the authenticator holds no such passkey');
    const held = again ?? this.#newPasskey(options, twist);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(held.id.length);
    const authData = Buffer.concat([
      sha256(held.rpId),
      Buffer.from([FLAG_UP | FLAG_AT | (twist.userVerified === false ? 0 : FLAG_UV)]),
      Buffer.alloc(4),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      held.id,
      held.coseKey,
    ]);
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: b64url(held.id),
      rawId: b64url(held.id),
      type: 'public-key' as const,
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.#clientData('webauthn.create', options.challenge, twist),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  #newPasskey(options: PublicKeyOptions, twist: CeremonyTwist): Held {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ]),
    );
    const held: Held = {
      id: randomBytes(16),
      privateKey,
      coseKey,
      rpId: twist.rpId ?? options.rp?.id ?? this.rpId,
      userHandle: options.user?.id ?? '',
      counter: 0,
    };
    this.#held.push(held);
    return held;
  }

  /** Answers navigator.credentials.get({publicKey}); with no allowed list, the first passkey held (discoverable). */
  get(options: PublicKeyOptions, twist: CeremonyTwist = {}) {
    const allowed = options.allowCredentials?.map((c) => c.id) ?? [];
    const wanted = twist.credentialId ?? allowed[0];
    const held = wanted === undefined ? this.#held[0] : this.#held.find((h) => b64url(h.id) === wanted);
    if (!held) throw new Error('the authenticator holds no such passkey');
    held.counter = twist.counter ?? held.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(held.counter);
    const authData = Buffer.concat([
      sha256(twist.rpId ?? options.rpId ?? held.rpId),
      Buffer.from([FLAG_UP | (twist.userVerified === false ? 0 : FLAG_UV)]),
      counter,
    ]);
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, twist);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]),
      held.privateKey,
    );
    return {
      id: b64url(held.id),
      rawId: b64url(held.id),
      type: 'public-key' as const,
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON,
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: held.userHandle,
      },
    };
  }

  /** The id of the n-th passkey this authenticator made. */
  credentialId(n = 0): string {
    const held = this.#held[n];
    if (!held) throw new Error(`no passkey number ${n}`);
    return b64url(held.id);
  }

  #clientData(type: string, challenge: string, twist: CeremonyTwist): string {
    const data = { type, challenge, origin: twist.origin ?? this.origin, crossOrigin: false };
    return Buffer.from(JSON.stringify(data)).toString('base64url');
  }
}

/** The parts of the server's creation and request options the authenticator reads. */
export interface PublicKeyOptions {
  challenge: string;
  rp?: { id?: string };
  rpId?: string;
  user?: { id: string };
  allowCredentials?: { id: string }[];
}

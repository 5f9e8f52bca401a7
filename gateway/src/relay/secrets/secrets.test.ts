import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { type ClusterState, createClusterState } from '../../cluster/index.ts';
import { OptionsService } from '../../domain/options/index.ts';
import { SecretMask } from '../../domain/secret-mask.ts';
import { AppError } from '../../errors.ts';
import type { Store } from '../../store/index.ts';
import { RELAY_ERRORS } from '../errors.ts';
import { UpstreamFailure } from '../exchange/failure.ts';
import type { ClientSink } from '../exchange/sink.ts';
import { snapshot } from '../routing/test-support.ts';
import type { SseEvent } from '../sse.ts';
import { channelSecrets } from './channel-secrets.ts';
import { scrubFailure } from './failure.ts';
import { SecretScrubber } from './scrubber.ts';
import { scrubbingSink } from './sink.ts';

const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
const serviceAccount = JSON.stringify({
  type: 'service_account',
  project_id: 'my-project-123',
  private_key_id: 'a1b2c3d4e5f6a7b8c9d0',
  private_key: String(pem),
  client_email: 'relay-bot@my-project-123.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.googleapis.com/token',
});

describe('channelSecrets', () => {
  const channel = snapshot(1, {
    keys: ['AKIAEXAMPLEACCESS|wJalrXUtnFEMIK7MDENGbPxRfiCYSECRET', serviceAccount],
    headerOverride: { Authorization: 'Bearer hdr-token-0123456789' },
    baseUrl: 'https://proxy-user:proxy%2Fpass%2B99@up.example.com/v1',
    setting: { proxy: 'http://x', nested: { api_secret: 'nested-secret-abcdef' } },
  });
  const mask = new SecretMask(channelSecrets(channel));

  it('masks each part of a composite key, and the JSON key by its credentials only', () => {
    expect(mask.mask('secret wJalrXUtnFEMIK7MDENGbPxRfiCYSECRET refused')).toBe('secret *** refused');
    expect(mask.mask('access key AKIAEXAMPLEACCESS unknown')).toBe('access key *** unknown');
    expect(mask.mask('key a1b2c3d4e5f6a7b8c9d0 revoked for relay-bot@my-project-123.iam.gserviceaccount.com')).toBe(
      'key *** revoked for ***',
    );
    const pemLine = String(pem).split('\n')[3]!;
    expect(mask.mask(`could not parse ${pemLine}`)).toBe('could not parse ***');
    expect(mask.mask(`escaped ${JSON.stringify(String(pem)).slice(40, 90)}`)).not.toContain(pemLine.slice(10, 30));
    // The public fields and the JSON's own words stay readable.
    expect(mask.mask('"type": "service_account", "token_uri": "https://oauth2.googleapis.com/token"')).toBe(
      '"type": "service_account", "token_uri": "https://oauth2.googleapis.com/token"',
    );
  });

  it("masks header override credentials, the base URL's user and password, and credential-named settings", () => {
    expect(mask.mask('token hdr-token-0123456789 expired')).toBe('token *** expired');
    expect(mask.mask('Authorization: Bearer hdr-token-0123456789')).not.toContain('hdr-token');
    expect(mask.mask('proxy auth proxy/pass+99 (proxy%2Fpass%2B99) for proxy-user failed')).toBe(
      'proxy auth *** (***) for *** failed',
    );
    expect(mask.mask('nested-secret-abcdef')).toBe('***');
  });
});

describe('SecretScrubber', () => {
  let database: { store: Store; dispose(): Promise<void> };
  let cluster: ClusterState;
  let options: OptionsService;
  let scrubber: SecretScrubber;
  const channel = snapshot(7, { keys: ['sk-channel-seven-0123456789'] });

  beforeAll(async () => {
    database = await createTestStore();
    cluster = await createClusterState({ namespace: `tollgate-secrets-test-${randomUUID()}` });
    options = await OptionsService.start({ db: database.store.db, bus: cluster.bus, syncIntervalMs: 60_000 });
    await options.set('EpayKey', 'epay-merchant-key-1');
    scrubber = new SecretScrubber({
      options,
      masterSecret: 'master-secret-of-the-gateway',
      channel: (id) => (id === 7 ? channel : undefined),
    });
  });

  afterAll(async () => {
    scrubber?.close();
    await options?.close();
    await cluster?.close();
    await database?.dispose();
  });

  it("masks the gateway's secrets always, a channel's with that channel (by snapshot or id)", () => {
    const text = 'sk-channel-seven-0123456789 master-secret-of-the-gateway epay-merchant-key-1';
    expect(scrubber.scrub(text)).toBe('sk-channel-seven-0123456789 *** ***');
    expect(scrubber.scrub(text, channel)).toBe('*** *** ***');
    expect(scrubber.scrub(text, 7)).toBe('*** *** ***');
    expect(scrubber.scrub(text, 8)).toBe('sk-channel-seven-0123456789 *** ***');
    expect(scrubber.scrubDeep({ error: { message: text } }, channel)).toEqual({ error: { message: '*** *** ***' } });
  });

  it('follows a changed secret option', async () => {
    expect(scrubber.scrub('rotated-9z8y7x6w5v', channel)).toBe('rotated-9z8y7x6w5v');
    await options.set('EpayKey', 'rotated-9z8y7x6w5v');
    expect(scrubber.scrub('rotated-9z8y7x6w5v', channel)).toBe('***');
    expect(scrubber.scrub('rotated-9z8y7x6w5v')).toBe('***');
  });

  it('scrubs a failure, and returns one with nothing to hide as it was', () => {
    const failure = new UpstreamFailure(
      { status: 401, message: 'bad key sk-channel-seven-0123456789', type: 'auth', code: 'invalid_api_key' },
      channel,
      0,
    );
    const scrubbed = scrubFailure(scrubber, failure, channel);
    expect(scrubbed).toBeInstanceOf(UpstreamFailure);
    expect(scrubbed.message).toBe('bad key ***');
    expect(scrubbed.error).toMatchObject({ status: 401, code: 'invalid_api_key', message: 'bad key ***' });
    const clean = new UpstreamFailure({ status: 500, message: 'overloaded', type: 'x', code: null }, channel, 0);
    expect(scrubFailure(scrubber, clean, channel)).toBe(clean);

    const unreachable = new AppError(RELAY_ERRORS.upstream_unreachable, {
      detail: 'connect to https://u:sk-channel-seven-0123456789@host failed',
    });
    const shown = scrubFailure(scrubber, unreachable, channel);
    expect(shown.code).toBe('upstream_unreachable');
    expect(shown.localized('en')).toBe('The upstream could not be reached: connect to https://u:***@host failed');
    const plain = new AppError(RELAY_ERRORS.model_required);
    expect(scrubFailure(scrubber, plain, channel)).toBe(plain);
  });

  it('scrubs stream events that carry an error and passes the others, bytes and all', () => {
    const written: Array<{ events: readonly SseEvent[]; bytes: Uint8Array | undefined }> = [];
    const sink = { write: (events, bytes) => written.push({ events, bytes }) > 0, started: true } as ClientSink;
    const scrubbing = scrubbingSink(sink, scrubber, channel);
    const delta = { data: '{"choices":[{"delta":{"content":"say \\"error\\" sk-channel-seven-0123456789"}}]}' };
    const bytes = new Uint8Array([1, 2, 3]);
    scrubbing.write([delta], bytes);
    expect(written[0]).toEqual({ events: [delta], bytes });
    const error = { data: '{"error":{"message":"key sk-channel-seven-0123456789 revoked"}}' };
    const claude = { event: 'error', data: 'overloaded for sk-channel-seven-0123456789' };
    scrubbing.write([delta, error, claude], bytes);
    expect(written[1]).toEqual({
      events: [
        delta,
        { data: '{"error":{"message":"key *** revoked"}}' },
        { event: 'error', data: 'overloaded for ***' },
      ],
      bytes: undefined,
    });
    expect(scrubbing.started).toBe(true);
  });

  it('scrubs a whole JSON answer that carries an error, and passes any other answer as it is', async () => {
    const answered: Uint8Array[] = [];
    const sink = { answer: async (_s, _t, body) => void answered.push(body) } as ClientSink;
    const scrubbing = scrubbingSink(sink, scrubber, channel);
    const ok = Buffer.from('{"choices":[{"message":{"content":"sk-channel-seven-0123456789"}}]}');
    await scrubbing.answer(200, 'application/json', ok);
    expect(answered[0]).toBe(ok);
    const failed = Buffer.from('{"error":{"message":"key sk-channel-seven-0123456789"}}');
    await scrubbing.answer(200, 'application/json; charset=utf-8', failed);
    expect(Buffer.from(answered[1]!).toString()).toBe('{"error":{"message":"key ***"}}');
    const audio = Buffer.from('"error" sk-channel-seven-0123456789');
    await scrubbing.answer(200, 'audio/mpeg', audio);
    expect(answered[2]).toBe(audio);
  });
});

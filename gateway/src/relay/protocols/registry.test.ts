import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, type ChannelType, type Endpoint } from '../../domain/channels/registry.ts';
import { canConvert } from '../convert/index.ts';
import type { WireFormat } from '../types.ts';
import { PROVIDERS, providerFor } from './index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const README = path.resolve(here, '../../../../README.md');

/** The relay format a request to each endpoint arrives in. */
const ENDPOINT_FORMAT: Record<Endpoint, WireFormat> = {
  chat: 'openai-chat',
  completions: 'openai-completions',
  responses: 'openai-responses',
  embeddings: 'openai-embeddings',
  images: 'openai-images',
  audio: 'openai-audio-speech',
  moderations: 'openai-moderations',
  rerank: 'rerank',
  messages: 'claude-messages',
  gemini: 'gemini-generate',
  realtime: 'openai-realtime',
  midjourney: 'midjourney',
  suno: 'suno',
  video: 'video',
};

/** The chat-like formats clients send; a type that chats must serve all of them (converted through the hub). */
const CHAT_CLIENTS: readonly WireFormat[] = ['openai-chat', 'openai-responses', 'claude-messages', 'gemini-generate'];

const offered = CHANNEL_TYPES.filter((type) => type.offered);
const notOffered = CHANNEL_TYPES.filter((type) => !type.offered);

describe('channel-type registry', () => {
  it('has one row per id and per name', () => {
    expect(new Set(CHANNEL_TYPES.map((t) => t.id)).size).toBe(CHANNEL_TYPES.length);
    expect(new Set(CHANNEL_TYPES.map((t) => t.name)).size).toBe(CHANNEL_TYPES.length);
  });

  it.each(offered.map((t) => [t.id, t.name, t] as const))(
    'offers %i (%s) only with a protocol folder that serves its endpoints',
    (_id, _name, type) => {
      expect(type.reason).toEqual({ zh: '', en: '' });
      expect(type.protocol).not.toBeNull();
      expect(existsSync(path.join(here, type.protocol!, 'index.ts'))).toBe(true);
      expect(providerFor(type.id)).toBe(PROVIDERS[type.protocol!]);
      expect(type.endpoints.length).toBeGreaterThan(0);
      for (const endpoint of type.endpoints) {
        // Videos are the protocol's video tasks, beside its chat where it has one (Veo on Gemini and Vertex).
        if (endpoint === 'video') expect(providerFor(type.id).video, endpoint).toBeDefined();
        else expect(providerFor(type.id).nativeFormat(ENDPOINT_FORMAT[endpoint]), endpoint).toBeDefined();
      }
      // Task-only types have no chat to test with (new-api does not test them either).
      expect(type.testable).toBe(type.endpoints.some((e) => e !== 'midjourney' && e !== 'suno' && e !== 'video'));
      // A type whose list needs its protocol's auth is listed by that protocol, and only such types are.
      expect(type.listing === 'protocol').toBe(providerFor(type.id).listModels !== undefined);
    },
  );

  it.each(offered.filter((t) => t.endpoints.includes('chat')).map((t) => [t.id, t.name, t] as const))(
    'lets every chat client format reach %i (%s), for each of its models',
    (id, _name, type) => {
      for (const model of type.models.length > 0 ? type.models : ['any-model']) {
        for (const format of CHAT_CLIENTS) {
          const native = providerFor(id).nativeFormat(format, model);
          expect(native !== undefined && canConvert(format, native), `${format} → ${model}`).toBe(true);
        }
      }
    },
  );

  it.each(notOffered.map((t) => [t.id, t.name, t] as const))(
    'does not offer %i (%s), says why, and promises nothing',
    (id, name, type) => {
      expect(type.reason.en.length).toBeGreaterThan(10);
      expect(type.reason.zh.length).toBeGreaterThan(5);
      expect(type.protocol).toBeNull();
      expect(type.endpoints).toEqual([]);
      expect(type.testable).toBe(false);
      expect(type.balance).toBeUndefined();
      expect(type.listing).toBe('none');
      expect(() => providerFor(id)).toThrow(`type ${id} (${name}) is not supported yet`);
    },
  );

  it('has a usable default base URL, or none where the channel must give one', () => {
    for (const type of CHANNEL_TYPES) {
      if (type.baseUrl === '') continue;
      const url = new URL(type.baseUrl);
      expect(['http:', 'https:'], type.name).toContain(url.protocol);
      expect(type.baseUrl.endsWith('/'), type.name).toBe(false);
    }
    // Without a default, only types whose base URL is the deployment's own, or whose host comes from a region (AWS, Vertex), are offered.
    expect(offered.filter((t) => t.baseUrl === '').map((t) => t.name)).toEqual([
      'Azure',
      'MidjourneyPlus',
      'Custom',
      'AWS',
      'SunoAPI',
      'VertexAI',
      'Xinference',
    ]);
  });

  it('gives API prefixes as a path without a trailing slash, and URL styles only to OpenAI-protocol types', () => {
    for (const type of offered) {
      // `{other}` stands for the channel's other field (Cloudflare's account id).
      expect(type.apiPrefix, type.name).toMatch(/^(\/([\w-]+|\{other\})(\/([\w-]+|\{other\}))*)?$/);
      if (type.openaiUrl !== 'prefix') expect(type.protocol, type.name).toBe('openai');
    }
  });

  it('spells composite keys as their parts joined by the separator (spec doc 2 §9)', () => {
    const composite = CHANNEL_TYPES.filter((t) => t.key.parts);
    // Spec doc 2 §9 names 15, 18, 22, 23 and 33; Zhipu v3's id.secret (16), Kling's AccessKey|SecretKey (50)
    // and Jimeng's AccessKeyID|SecretAccessKey (51) are split the same way.
    expect(composite.map((t) => t.id)).toEqual([15, 16, 18, 22, 23, 33, 50, 51]);
    for (const type of composite) {
      const forms = [type.key.parts!, ...(type.key.alternative ? [type.key.alternative] : [])];
      expect(forms.map((parts) => parts.join(type.key.separator)).join(' or ')).toBe(type.key.hint);
    }
  });

  it('offers Midjourney (2, 5) on the /mj routes, Suno (36) on /suno, and the video vendors (50, 51, 52, 54, 55) on the video routes', () => {
    for (const id of [2, 5]) expect(CHANNEL_TYPES.find((t) => t.id === id)?.endpoints).toEqual(['midjourney']);
    expect(CHANNEL_TYPES.find((t) => t.id === 36)?.endpoints).toEqual(['suno']);
    for (const id of [50, 51, 52, 54, 55]) expect(CHANNEL_TYPES.find((t) => t.id === id)?.endpoints).toEqual(['video']);
  });
});

/** The README's table of channel types, from the registry. */
function channelTypesTable(types: readonly ChannelType[]): string {
  const offeredRows = types
    .filter((t) => t.offered)
    .map(
      (t) =>
        `| ${t.id} | ${t.name} | ${t.protocol}${t.apiPrefix !== '/v1' && t.protocol === 'openai' ? ` (\`${t.apiPrefix || '/'}\`)` : ''} | ${t.endpoints.join(', ')} |`,
    );
  const refusedRows = types.filter((t) => !t.offered).map((t) => `| ${t.id} | ${t.name} | ${t.reason.en} |`);
  return [
    '| Id | Type | Protocol (API prefix) | Upstream endpoints |',
    '|---|---|---|---|',
    ...offeredRows,
    '',
    'Not offered (refused with `CHANNEL_TYPE_UNSUPPORTED`; stored rows of them are listed, left out of routing, and can be disabled or deleted):',
    '',
    '| Id | Type | Why not |',
    '|---|---|---|',
    ...refusedRows,
  ].join('\n');
}

describe('README', () => {
  it('lists the channel types as the registry has them', () => {
    const text = readFileSync(README, 'utf8');
    const section = /<!-- channel-types:start -->\n([\s\S]*?)\n<!-- channel-types:end -->/.exec(text)?.[1];
    expect(section, 'README.md lacks the channel-types markers').toBeDefined();
    expect(section).toBe(channelTypesTable(CHANNEL_TYPES));
  });
});

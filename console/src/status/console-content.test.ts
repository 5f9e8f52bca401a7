import { describe, expect, it } from 'vitest';
import { API_INFO_COLORS as GATEWAY_COLORS } from '../../../gateway/src/domain/options/definitions.ts';
import { en } from '../i18n/en.ts';
import { zh } from '../i18n/zh.ts';
import {
  API_INFO_COLORS,
  blankEntry,
  CONTENT_KINDS,
  CONTENT_SPECS,
  checkEntry,
  checkList,
  latestAnnouncements,
  panelEntries,
  readList,
} from './console-content.ts';
import { SIDEBAR_SECTIONS } from './modules.ts';

const fields = (problems: Array<{ field: string; message: string }>) =>
  problems.map((p) => `${p.field}:${p.message.replace('modules.validation.', '')}`);

describe('dashboard content entries', () => {
  it('paints exactly the colours the gateway accepts', () => {
    expect(Object.keys(API_INFO_COLORS).sort()).toEqual([...GATEWAY_COLORS].sort());
  });

  it('checks API addresses field by field', () => {
    const good = { url: 'https://api.example.com', route: 'Main', description: 'Closest to you', color: 'blue' };
    expect(checkEntry('api_info', good)).toEqual([]);
    expect(fields(checkEntry('api_info', { ...good, url: 'javascript:alert(1)', color: 'gold', route: '' }))).toEqual([
      'url:url',
      'route:required',
      'color:choice',
    ]);
    expect(fields(checkEntry('api_info', { ...good, description: 'x'.repeat(201) }))).toEqual(['description:too_long']);
  });

  it('checks announcements: content, an RFC 3339 date, a known type, a short note', () => {
    const good = { content: '**New** model', publishDate: '2026-11-20T08:00:00Z' };
    expect(checkEntry('announcements', good)).toEqual([]);
    expect(checkEntry('announcements', { ...good, type: 'warning', extra: 'see docs' })).toEqual([]);
    expect(
      fields(
        checkEntry('announcements', { content: 5, publishDate: '20 Nov', type: 'urgent', extra: 'y'.repeat(201) }),
      ),
    ).toEqual(['content:text', 'publishDate:date', 'type:choice', 'extra:too_long']);
  });

  it('checks FAQ entries and the number of entries', () => {
    expect(fields(checkEntry('faq', { question: 'Why?', answer: '' }))).toEqual(['answer:required']);
    const many = Array.from({ length: 101 }, () => ({ question: 'q', answer: 'a' }));
    expect(checkList('faq', many).tooMany).toBe(true);
    expect(checkList('faq', many.slice(0, 100))).toEqual({ tooMany: false, byEntry: new Map() });
  });

  it('starts a new entry valid where it can, with the next id', () => {
    const entry = blankEntry('announcements', [{ id: 4 }], new Date('2026-11-26T10:00:00.123Z'));
    expect(entry).toEqual({ id: 5, content: '', publishDate: '2026-11-26T10:00:00Z', type: 'default', extra: '' });
    expect(fields(checkEntry('announcements', entry))).toEqual(['content:required']);
  });

  it('reads stored lists leniently', () => {
    expect(readList('')).toEqual([]);
    expect(readList('{')).toEqual([]);
    expect(readList('[{"question":"q"},3,null]')).toEqual([{ question: 'q' }]);
  });

  it('shows a panel only when it is on and has valid entries', () => {
    const faq = [
      { question: 'q', answer: 'a' },
      { question: '', answer: 'broken' },
    ];
    expect(panelEntries({ faq_enabled: true, faq }, 'faq')).toEqual([faq[0]]);
    expect(panelEntries({ faq_enabled: false, faq }, 'faq')).toBeUndefined();
    expect(panelEntries({ faq_enabled: true, faq: [] }, 'faq')).toBeUndefined();
  });

  it('lists announcements newest first, at most 20', () => {
    const entries = Array.from({ length: 25 }, (_, i) => ({
      content: `n${i}`,
      publishDate: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
    }));
    const latest = latestAnnouncements(entries);
    expect(latest).toHaveLength(20);
    expect(latest[0]?.content).toBe('n24');
    expect(latest[19]?.content).toBe('n5');
  });

  it('has a label in both languages for every field, choice and menu entry the editors build names for', () => {
    const keys = CONTENT_KINDS.flatMap((kind) =>
      CONTENT_SPECS[kind].fields.flatMap((field) => [
        `content.${kind}.fields.${field.name}`,
        ...(kind === 'api_info' ? [] : (field.choices ?? []).map((choice) => `content.${kind}.choices.${choice}`)),
      ]),
    );
    keys.push(
      ...Object.values(SIDEBAR_SECTIONS).flatMap((entries) => entries.map((entry) => `sidebar.entries.${entry}`)),
    );
    const lookup = (catalogue: object, key: string) =>
      key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], catalogue);
    for (const catalogue of [en.modules, zh.modules]) {
      expect(keys.filter((key) => typeof lookup(catalogue, key) !== 'string')).toEqual([]);
    }
  });
});

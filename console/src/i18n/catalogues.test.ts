import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { en } from './en.ts';
import { zh } from './zh.ts';

/** i18next plural forms: `key_one`/`key_other` in English are the same message as `key` in Chinese. */
const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;

/** Every message of a catalogue by its dotted key (plural suffix removed), with its text. */
function messages(catalogue: object, prefix = '', into = new Map<string, string[]>()): Map<string, string[]> {
  for (const [key, value] of Object.entries(catalogue)) {
    const dotted = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'object' && value !== null) messages(value, dotted, into);
    else {
      const base = dotted.replace(PLURAL_SUFFIX, '');
      into.set(base, [...(into.get(base) ?? []), String(value)]);
    }
  }
  return into;
}

const catalogues = { zh: messages(zh), en: messages(en) };
const namespaces = [...new Set([...Object.keys(zh), ...Object.keys(en)])];

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/**
 * Keys the source uses: the first argument of `t(…)`, `translate(…)` and `notify(…)` when it is a plain
 * string, and any string literal that starts with a catalogue namespace (`'shell.menu.token'` in a table).
 */
function usedKeys(): Map<string, string> {
  const used = new Map<string, string>();
  const call = /\b(?:t|translate|notify)\(\s*(['"`])([^'"`$\s]+?)\1/g;
  const literal = new RegExp(`(['"\`])((?:${namespaces.join('|')})\\.[A-Za-z0-9_.]*[A-Za-z0-9_])\\1`, 'g');
  for (const file of sourceFiles(srcDir)) {
    if (file.startsWith(path.join(srcDir, 'i18n') + path.sep)) continue;
    const text = readFileSync(file, 'utf8');
    const where = path.relative(srcDir, file);
    for (const match of text.matchAll(call)) if (match[2]!.includes('.')) used.set(match[2]!, where);
    for (const match of text.matchAll(literal)) used.set(match[2]!, where);
  }
  return used;
}

const variables = (texts: string[]) =>
  [...new Set(texts.flatMap((text) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1])))].sort();

describe('i18n catalogues', () => {
  it('have the same keys in zh and en', () => {
    const onlyZh = [...catalogues.zh.keys()].filter((key) => !catalogues.en.has(key));
    const onlyEn = [...catalogues.en.keys()].filter((key) => !catalogues.zh.has(key));
    expect({ onlyZh, onlyEn }).toEqual({ onlyZh: [], onlyEn: [] });
  });

  it('use the same {{variables}} in both languages (a plural message may drop some in Chinese)', () => {
    const differing: string[] = [];
    for (const [key, zhTexts] of catalogues.zh) {
      const enTexts = catalogues.en.get(key);
      if (!enTexts) continue;
      const zhVars = variables(zhTexts);
      const enVars = variables(enTexts);
      const plural = enTexts.length > 1;
      const extra = zhVars.filter((name) => !enVars.includes(name));
      const dropped = enVars.filter((name) => !zhVars.includes(name));
      if (extra.length > 0 || (!plural && dropped.length > 0)) differing.push(key);
    }
    expect(differing).toEqual([]);
  });

  it('translate every react-admin message (ra.*)', () => {
    const ra = [...catalogues.en.keys()].filter((key) => key.startsWith('ra.'));
    expect(ra.length).toBeGreaterThan(150);
    expect(ra.filter((key) => !catalogues.zh.has(key))).toEqual([]);
  });

  it('have every key the source uses', () => {
    const used = usedKeys();
    expect(used.size).toBeGreaterThan(30);
    const missing = [...used]
      .filter(([key]) => !catalogues.zh.has(key) || !catalogues.en.has(key))
      .map(([key, file]) => `${key} (${file})`);
    expect(missing).toEqual([]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHANNEL_TYPES } from '../../gateway/src/domain/channels/registry.ts';

/**
 * The console has no list of channel types of its own: it reads the gateway's registry over
 * GET /api/channel/types. A hand copy drifts (it offered types the relay cannot speak), so this
 * fails as soon as one reappears in any source file.
 */
const srcDir = path.dirname(fileURLToPath(import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Objects shaped like a type row: `{ id: 14, name: '…' }`. */
const ROW = /\{\s*id:\s*\d+\s*,\s*name:\s*['"`]/g;
/** Registry names distinctive enough that several of them quoted in one file mean a copied list. */
const NAMES = CHANNEL_TYPES.map((type) => type.name).filter((name) => name.length >= 4);

function handCopies(text: string): { rows: number; names: string[] } {
  const rows = text.match(ROW)?.length ?? 0;
  const names = NAMES.filter((name) =>
    new RegExp(`['"\`]${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"\`]`).test(text),
  );
  return { rows, names };
}

describe('channel types in the console', () => {
  it('are never a hand-copied list', () => {
    const offenders = sourceFiles(srcDir)
      .map((file) => ({ file: path.relative(srcDir, file), ...handCopies(readFileSync(file, 'utf8')) }))
      .filter(({ rows, names }) => rows >= 5 || names.length >= 4);
    expect(offenders).toEqual([]);
  });

  it('would catch one', () => {
    const copy = `const TYPES = [${CHANNEL_TYPES.slice(0, 6)
      .map((t) => `{ id: ${t.id}, name: '${t.name}' }`)
      .join(', ')}];`;
    expect(handCopies(copy).rows).toBe(6);
    expect(
      handCopies(`const names = { 14: 'Anthropic', 24: 'Gemini', 43: 'DeepSeek', 25: 'Moonshot' };`).names,
    ).toHaveLength(4);
  });
});

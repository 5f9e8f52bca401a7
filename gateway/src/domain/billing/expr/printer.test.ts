import { describe, expect, it } from 'vitest';
import { parseExpression } from './parser.ts';
import { printExpression } from './printer.ts';

const canonical = (source: string) => printExpression(parseExpression(source));

describe('printExpression', () => {
  it('spells a tree canonically, keeping only the parentheses its meaning needs', () => {
    expect(canonical("param('a.b')=='x'&&!(p>1)")).toBe('param("a.b") == "x" && !(p > 1)');
    expect(canonical('(p + c) * 2 - (3 - 1) - 4')).toBe('(p + c) * 2 - (3 - 1) - 4');
    expect(canonical('p - (c - 1)')).toBe('p - (c - 1)');
    expect(canonical('(2 ** 3) ** 2 + 2 ** 3 ** 2')).toBe('(2 ** 3) ** 2 + 2 ** 3 ** 2');
    expect(canonical('(p > 1 ? 2 : 1) * -c ?? nil')).toBe('(p > 1 ? 2 : 1) * -c ?? nil');
    expect(canonical('header("x") startsWith "a" or true')).toBe('header("x") startsWith "a" || true');
  });
});

import { ExprError } from './error.ts';

export type TokenKind = 'number' | 'string' | 'name' | 'op' | 'end';

export interface Token {
  kind: TokenKind;
  /** The operator or name as written; the decoded text of a string. */
  text: string;
  /** The numeric value of a number token. */
  value?: number;
  /** Offset of the token's first character. */
  position: number;
}

// Longest first, so that `<=` is not read as `<` then `=`.
const OPERATORS = [
  '&&',
  '||',
  '==',
  '!=',
  '<=',
  '>=',
  '??',
  '**',
  '+',
  '-',
  '*',
  '/',
  '%',
  '<',
  '>',
  '!',
  '?',
  ':',
  '(',
  ')',
  ',',
];
const NUMBER = /(?:\d[\d_]*(?:\.\d[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const SPACE = /\s+/y;
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

/** The tokens of an expression, ending with an `end` token. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < source.length) {
    SPACE.lastIndex = at;
    if (SPACE.test(source)) {
      at = SPACE.lastIndex;
      continue;
    }
    const char = source[at] as string;
    if (char === '"' || char === "'") {
      const [text, next] = readString(source, at);
      tokens.push({ kind: 'string', text, position: at });
      at = next;
      continue;
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(source);
    if (number) {
      const value = Number(number[0].replaceAll('_', ''));
      if (!Number.isFinite(value)) throw new ExprError(at, 'number out of range', '数字超出范围');
      tokens.push({ kind: 'number', text: number[0], value, position: at });
      at = NUMBER.lastIndex;
      continue;
    }
    NAME.lastIndex = at;
    const name = NAME.exec(source);
    if (name) {
      tokens.push({ kind: 'name', text: name[0], position: at });
      at = NAME.lastIndex;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, at));
    if (!op) throw new ExprError(at, `unexpected character "${char}"`, `无法识别的字符 "${char}"`);
    tokens.push({ kind: 'op', text: op, position: at });
    at += op.length;
  }
  tokens.push({ kind: 'end', text: '', position: source.length });
  return tokens;
}

function readString(source: string, start: number): [string, number] {
  const quote = source[start];
  let text = '';
  for (let at = start + 1; at < source.length; at++) {
    const char = source[at] as string;
    if (char === quote) return [text, at + 1];
    if (char !== '\\') {
      text += char;
      continue;
    }
    const escaped = ESCAPES[source[at + 1] ?? ''];
    if (escaped === undefined) throw new ExprError(at, 'unknown escape in string', '字符串中的转义无效');
    text += escaped;
    at++;
  }
  throw new ExprError(start, 'string is not closed', '字符串缺少结尾引号');
}

import { isTimeZone } from '../../time-zones.ts';
import {
  type BinaryOp,
  CLOCK_FUNCTIONS,
  type ExprNode,
  FUNCTIONS,
  type FunctionName,
  TOKEN_VARIABLES,
  type TokenVariable,
} from './ast.ts';
import { ExprError } from './error.ts';
import { type Token, tokenize } from './lexer.ts';

/** Limits that keep a stored expression cheap to compile and to run on every request. */
export const MAX_EXPRESSION_LENGTH = 4000;
export const MAX_EXPRESSION_NODES = 400;
export const MAX_EXPRESSION_DEPTH = 32;

/** Binary operators by precedence, loosest first; `**` binds tightest and groups to the right. */
const LEVELS: ReadonlyArray<ReadonlyArray<string>> = [
  ['??'],
  ['||', 'or'],
  ['&&', 'and'],
  ['==', '!='],
  ['<', '<=', '>', '>=', 'contains', 'startsWith', 'endsWith'],
  ['+', '-'],
  ['*', '/', '%'],
];
const WORD_OPERATORS: Readonly<Record<string, BinaryOp>> = { or: '||', and: '&&' };

/** Arity of each function: [fewest, most] arguments. */
const ARITY: Readonly<Record<FunctionName, readonly [number, number]>> = {
  tier: [2, 2],
  fixed: [1, 1],
  param: [1, 1],
  header: [1, 1],
  has: [2, 2],
  max: [2, 16],
  min: [2, 16],
  abs: [1, 1],
  ceil: [1, 1],
  floor: [1, 1],
  hour: [0, 1],
  minute: [0, 1],
  weekday: [0, 1],
  month: [0, 1],
  day: [0, 1],
};
/** Arguments that must be written as a string literal, so that tiers, fields and zones are known when saved. */
const LITERAL_STRING_ARGS: Partial<Record<FunctionName, number>> = { tier: 0, param: 0, header: 0 };

/**
 * Parses an expression into its tree (recursive descent), refusing unknown names, wrong argument counts,
 * division by a constant zero, and expressions past the size and depth limits. Throws ExprError.
 */
export function parseExpression(source: string): ExprNode {
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ExprError(
      MAX_EXPRESSION_LENGTH,
      `longer than ${MAX_EXPRESSION_LENGTH} characters`,
      `超过 ${MAX_EXPRESSION_LENGTH} 个字符`,
    );
  }
  const parser = new Parser(tokenize(source));
  const tree = parser.expression();
  const rest = parser.peek();
  if (rest.kind !== 'end') throw new ExprError(rest.position, `unexpected "${rest.text}"`, `多余的 "${rest.text}"`);
  return tree;
}

class Parser {
  readonly #tokens: Token[];
  #at = 0;
  #nodes = 0;
  #depth = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  peek(): Token {
    return this.#tokens[this.#at] as Token;
  }

  expression(): ExprNode {
    const start = this.peek();
    this.#depth++;
    if (this.#depth > MAX_EXPRESSION_DEPTH) {
      throw new ExprError(
        start.position,
        `nested deeper than ${MAX_EXPRESSION_DEPTH} levels`,
        `嵌套超过 ${MAX_EXPRESSION_DEPTH} 层`,
      );
    }
    const test = this.binary(0);
    let node = test;
    if (this.#accept('?')) {
      const then = this.expression();
      this.#expect(':');
      const otherwise = this.expression();
      node = this.#node({ type: 'conditional', test, then, otherwise, position: test.position });
    }
    this.#depth--;
    return node;
  }

  binary(level: number): ExprNode {
    if (level === LEVELS.length) return this.power();
    let left = this.binary(level + 1);
    for (;;) {
      const token = this.peek();
      const ops = LEVELS[level] as ReadonlyArray<string>;
      if ((token.kind !== 'op' && token.kind !== 'name') || !ops.includes(token.text)) return left;
      this.#at++;
      const op = (WORD_OPERATORS[token.text] ?? token.text) as BinaryOp;
      const right = this.binary(level + 1);
      if ((op === '/' || op === '%') && constantValue(right) === 0) {
        throw new ExprError(right.position, 'division by zero', '除数为零');
      }
      left = this.#node({ type: 'binary', op, left, right, position: left.position });
    }
  }

  power(): ExprNode {
    const base = this.unary();
    const token = this.peek();
    if (token.kind !== 'op' || token.text !== '**') return base;
    this.#at++;
    const exponent = this.power();
    return this.#node({ type: 'binary', op: '**', left: base, right: exponent, position: base.position });
  }

  unary(): ExprNode {
    const token = this.peek();
    const op = token.text === 'not' && token.kind === 'name' ? '!' : token.text;
    if ((token.kind === 'op' || token.kind === 'name') && (op === '-' || op === '+' || op === '!')) {
      this.#at++;
      this.#depth++;
      if (this.#depth > MAX_EXPRESSION_DEPTH) {
        throw new ExprError(
          token.position,
          `nested deeper than ${MAX_EXPRESSION_DEPTH} levels`,
          `嵌套超过 ${MAX_EXPRESSION_DEPTH} 层`,
        );
      }
      const operand = this.unary();
      this.#depth--;
      return this.#node({ type: 'unary', op, operand, position: token.position });
    }
    return this.primary();
  }

  primary(): ExprNode {
    const token = this.peek();
    this.#at++;
    switch (token.kind) {
      case 'number':
        return this.#node({ type: 'number', value: token.value as number, position: token.position });
      case 'string':
        return this.#node({ type: 'string', value: token.text, position: token.position });
      case 'name':
        return this.#name(token);
      case 'op':
        if (token.text === '(') {
          const inner = this.expression();
          this.#expect(')');
          return inner;
        }
        throw new ExprError(token.position, `unexpected "${token.text}"`, `此处不应出现 "${token.text}"`);
      case 'end':
        throw new ExprError(token.position, 'the expression ends too early', '表达式不完整');
    }
  }

  #name(token: Token): ExprNode {
    const { text: name, position } = token;
    if (name === 'true' || name === 'false') return this.#node({ type: 'boolean', value: name === 'true', position });
    if (name === 'nil' || name === 'null') return this.#node({ type: 'nil', position });
    if (this.peek().text !== '(' || this.peek().kind !== 'op') {
      if (!(TOKEN_VARIABLES as readonly string[]).includes(name)) {
        throw new ExprError(position, `unknown name "${name}"`, `未知的名称 "${name}"`);
      }
      return this.#node({ type: 'variable', name: name as TokenVariable, position });
    }
    if (!(FUNCTIONS as readonly string[]).includes(name)) {
      throw new ExprError(position, `unknown function "${name}"`, `未知的函数 "${name}"`);
    }
    this.#at++;
    const args: ExprNode[] = [];
    if (!this.#accept(')')) {
      do args.push(this.expression());
      while (this.#accept(','));
      this.#expect(')');
    }
    const fn = name as FunctionName;
    checkArguments(fn, args, position);
    return this.#node({ type: 'call', name: fn, args, position });
  }

  #node(node: ExprNode): ExprNode {
    this.#nodes++;
    if (this.#nodes > MAX_EXPRESSION_NODES) {
      throw new ExprError(
        node.position,
        `more than ${MAX_EXPRESSION_NODES} terms`,
        `超过 ${MAX_EXPRESSION_NODES} 个项`,
      );
    }
    return node;
  }

  #accept(op: string): boolean {
    const token = this.peek();
    if (token.kind !== 'op' || token.text !== op) return false;
    this.#at++;
    return true;
  }

  #expect(op: string): void {
    const token = this.peek();
    if (this.#accept(op)) return;
    const found = token.kind === 'end' ? 'the end' : `"${token.text}"`;
    throw new ExprError(token.position, `expected "${op}" but found ${found}`, `此处应为 "${op}"`);
  }
}

function checkArguments(fn: FunctionName, args: ExprNode[], position: number): void {
  const [fewest, most] = ARITY[fn];
  if (args.length < fewest || args.length > most) {
    const count = fewest === most ? String(fewest) : `${fewest} to ${most}`;
    throw new ExprError(position, `${fn}() takes ${count} arguments`, `${fn}() 需要 ${count} 个参数`);
  }
  const literal = LITERAL_STRING_ARGS[fn];
  const clock = (CLOCK_FUNCTIONS as readonly string[]).includes(fn);
  const mustBeString = literal !== undefined ? args[literal] : clock ? args[0] : undefined;
  if (mustBeString && mustBeString.type !== 'string') {
    throw new ExprError(mustBeString.position, `${fn}() needs a quoted name here`, `${fn}() 此处需要带引号的名称`);
  }
  if (clock && mustBeString?.type === 'string' && !isTimeZone(mustBeString.value)) {
    throw new ExprError(
      mustBeString.position,
      `unknown time zone "${mustBeString.value}"`,
      `未知的时区 "${mustBeString.value}"`,
    );
  }
}

/** The value of a subtree made only of number literals and arithmetic, else undefined. */
function constantValue(node: ExprNode): number | undefined {
  if (node.type === 'number') return node.value;
  if (node.type === 'unary' && node.op !== '!') {
    const operand = constantValue(node.operand);
    return operand === undefined ? undefined : node.op === '-' ? -operand : operand;
  }
  if (node.type !== 'binary') return undefined;
  const left = constantValue(node.left);
  const right = constantValue(node.right);
  if (left === undefined || right === undefined) return undefined;
  switch (node.op) {
    case '+':
      return left + right;
    case '-':
      return left - right;
    case '*':
      return left * right;
    default:
      return undefined;
  }
}

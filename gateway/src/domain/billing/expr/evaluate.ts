import type { ClockFunction, ExprNode, TokenVariable } from './ast.ts';
import { clockPart } from './clock.ts';
import { ExprError } from './error.ts';

/** What an expression reads while it runs. */
export interface ExprContext {
  tokens: Readonly<Record<TokenVariable, number>>;
  /** A field of the request body by dotted path (`reasoning.effort`, `messages.0.role`), or undefined. */
  param(path: string): unknown;
  /** A request header by its lower-case name, or '' when absent. */
  header(name: string): string;
  now: Date;
  /** The zone clock functions read when given no zone of their own (`billing_setting.timezone`). */
  timeZone: string;
}

export interface ExprResult {
  /** USD per 1M tokens × tokens: the cost in millionths of a dollar. */
  cost: number;
  /** The name of the last tier() that ran, '' when none did. */
  tier: string;
  /** The conditionals whose condition held and that ran. */
  taken: ReadonlySet<ExprNode>;
}

interface RunState {
  tier: string;
  taken: Set<ExprNode>;
}

type Value = number | string | boolean | null | object;

/** A fixed price in USD for the request, on the same scale as token prices ($/1M × tokens). */
const FIXED_SCALE = 1_000_000;

/** Runs a parsed expression. Throws ExprError when a value has the wrong type or a divisor is zero. */
export function evaluate(tree: ExprNode, context: ExprContext): ExprResult {
  const state: RunState = { tier: '', taken: new Set() };
  const value = run(tree, context, state);
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ExprError(tree.position, 'the expression does not give a number', '表达式的结果不是数字');
  }
  if (value < 0) throw new ExprError(tree.position, 'the expression gives a negative cost', '表达式的结果为负数');
  return { cost: value, tier: state.tier, taken: state.taken };
}

function run(node: ExprNode, context: ExprContext, state: RunState): Value {
  switch (node.type) {
    case 'number':
    case 'string':
    case 'boolean':
      return node.value;
    case 'nil':
      return null;
    case 'variable':
      return context.tokens[node.name];
    case 'unary': {
      const operand = run(node.operand, context, state);
      if (node.op === '!') return !truthy(operand);
      const n = number(operand, node.operand);
      return node.op === '-' ? -n : n;
    }
    case 'conditional':
      if (!truthy(run(node.test, context, state))) return run(node.otherwise, context, state);
      state.taken.add(node);
      return run(node.then, context, state);
    case 'binary':
      return binary(node, context, state);
    case 'call':
      return call(node, context, state);
  }
}

function binary(node: Extract<ExprNode, { type: 'binary' }>, context: ExprContext, state: RunState): Value {
  const left = run(node.left, context, state);
  // Logical operators short-circuit, so a branch that is not taken is not evaluated.
  if (node.op === '&&') return truthy(left) && truthy(run(node.right, context, state));
  if (node.op === '||') return truthy(left) || truthy(run(node.right, context, state));
  if (node.op === '??') return left ?? run(node.right, context, state);
  const right = run(node.right, context, state);
  switch (node.op) {
    case '==':
      return equal(left, right);
    case '!=':
      return !equal(left, right);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compare(node.op, left, right);
    case 'contains':
      return text(left).includes(text(right));
    case 'startsWith':
      return text(left).startsWith(text(right));
    case 'endsWith':
      return text(left).endsWith(text(right));
    case '+':
      if (typeof left === 'string' && typeof right === 'string') return left + right;
      return number(left, node.left) + number(right, node.right);
    default:
      return arithmetic(node, number(left, node.left), number(right, node.right));
  }
}

function arithmetic(node: Extract<ExprNode, { type: 'binary' }>, left: number, right: number): number {
  switch (node.op) {
    case '-':
      return left - right;
    case '*':
      return left * right;
    case '**':
      return left ** right;
    default:
      if (right === 0) throw new ExprError(node.right.position, 'division by zero', '除数为零');
      return node.op === '/' ? left / right : left % right;
  }
}

function call(node: Extract<ExprNode, { type: 'call' }>, context: ExprContext, state: RunState): Value {
  const args = node.args;
  const arg = (i: number) => run(args[i] as ExprNode, context, state);
  const num = (i: number) => number(arg(i), args[i] as ExprNode);
  switch (node.name) {
    case 'tier': {
      const value = num(1);
      state.tier = String(arg(0));
      return value;
    }
    case 'fixed':
      return num(0) * FIXED_SCALE;
    case 'param':
      return context.param(String(arg(0))) ?? null;
    case 'header':
      return context.header(String(arg(0)).toLowerCase());
    case 'has': {
      const source = arg(0);
      const part = text(arg(1));
      return source !== null && part !== '' && text(source).includes(part);
    }
    case 'max':
      return Math.max(...args.map((_, i) => num(i)));
    case 'min':
      return Math.min(...args.map((_, i) => num(i)));
    case 'abs':
      return Math.abs(num(0));
    case 'ceil':
      return Math.ceil(num(0));
    case 'floor':
      return Math.floor(num(0));
    default:
      return clockPart(node.name as ClockFunction, context.now, args.length ? String(arg(0)) : context.timeZone);
  }
}

function number(value: Value, node: ExprNode): number {
  if (typeof value === 'number') return value;
  // Request fields may carry numbers as text ("n": "2"); an absent field counts as 0.
  if (value === null) return 0;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new ExprError(node.position, 'a number is needed here', '此处需要数字');
}

function truthy(value: Value): boolean {
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '';
  return value === true || (typeof value === 'object' && value !== null);
}

function text(value: Value): string {
  if (value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function equal(left: Value, right: Value): boolean {
  if (typeof left === 'number' && typeof right === 'number') return left === right;
  // A number against a numeric text ("2" == 2): request fields are not always typed.
  if (typeof left === 'number' || typeof right === 'number') {
    const [n, other] = typeof left === 'number' ? [left, right] : [right as number, left];
    return typeof other === 'string' && other.trim() !== '' && Number(other) === n;
  }
  return left === right;
}

function compare(op: '<' | '<=' | '>' | '>=', left: Value, right: Value): boolean {
  const bothStrings = typeof left === 'string' && typeof right === 'string';
  if (!bothStrings && (typeof left !== 'number' || typeof right !== 'number')) return false;
  const l = left as number | string;
  const r = right as number | string;
  return op === '<' ? l < r : op === '<=' ? l <= r : op === '>' ? l > r : l >= r;
}

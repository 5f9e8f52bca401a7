import { CLOCK_FUNCTIONS, type ExprNode, TOKEN_VARIABLES, type TokenVariable } from './ast.ts';
import { ExprError } from './error.ts';
import { type ExprContext, evaluate } from './evaluate.ts';
import { parseExpression } from './parser.ts';
import { printExpression } from './printer.ts';

/**
 * A request multiplier: a factor `(<condition on param, header or the clock> ? <number> : 1)`, which the
 * consume log lists with whether it applied (new-api's `request_rules`).
 */
export interface RequestRule {
  cond: string;
  multiplier: number;
  matched: boolean;
}

const PROBES: ReadonlySet<string> = new Set(['param', 'header', ...CLOCK_FUNCTIONS]);

/** A checked expression, ready to run on every request. */
export interface CompiledExpression {
  readonly source: string;
  readonly tree: ExprNode;
  /** The token variables it reads: a sub-count it prices on its own is taken out of `p` or `c`. */
  readonly variables: ReadonlySet<TokenVariable>;
  /** The tier names it can select, in the order written (for the pricing page). */
  readonly tiers: readonly string[];
  /** Its request multipliers, in the order written. */
  readonly rules: ReadonlyArray<{ node: ExprNode; cond: string; multiplier: number }>;
}

export interface ExpressionRun {
  cost: number;
  tier: string;
  rules: RequestRule[];
}

const cache = new Map<string, CompiledExpression>();
const CACHE_LIMIT = 256;

/**
 * Compiles an expression (new-api's `billing_expr` syntax; an optional `v1:` version prefix is accepted),
 * once per distinct text: the relay asks for it on every request. Throws ExprError.
 */
export function compileExpression(source: string): CompiledExpression {
  const cached = cache.get(source);
  if (cached) return cached;
  const body = source.startsWith('v1:') ? source.slice(3) : source;
  // Positions stay relative to what the administrator typed.
  const offset = source.length - body.length;
  const tree = shift(parseAt(body, offset), offset);
  const variables = new Set<TokenVariable>();
  const tiers: string[] = [];
  const rules: Array<{ node: ExprNode; cond: string; multiplier: number }> = [];
  visit(tree, (node) => {
    const rule = requestRule(node);
    if (rule) rules.push(rule);
    if (node.type === 'variable') variables.add(node.name);
    if (node.type === 'call' && node.name === 'tier') {
      const name = node.args[0];
      if (name?.type === 'string' && !tiers.includes(name.value)) tiers.push(name.value);
    }
  });
  const compiled: CompiledExpression = { source, tree, variables, tiers, rules };
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(source, compiled);
  return compiled;
}

export function runExpression(compiled: CompiledExpression, context: ExprContext): ExpressionRun {
  const { cost, tier, taken } = evaluate(compiled.tree, context);
  const rules = compiled.rules.map(({ node, cond, multiplier }) => ({ cond, multiplier, matched: taken.has(node) }));
  return { cost, tier, rules };
}

function requestRule(node: ExprNode): { node: ExprNode; cond: string; multiplier: number } | undefined {
  if (node.type !== 'conditional' || node.then.type !== 'number') return undefined;
  if (node.otherwise.type !== 'number' || node.otherwise.value !== 1) return undefined;
  let probed = false;
  visit(node.test, (inner) => {
    if (inner.type === 'call' && PROBES.has(inner.name)) probed = true;
  });
  return probed ? { node, cond: printExpression(node.test), multiplier: node.then.value } : undefined;
}

/** Zero for every token variable. */
export function noTokens(): Record<TokenVariable, number> {
  return Object.fromEntries(TOKEN_VARIABLES.map((name) => [name, 0])) as Record<TokenVariable, number>;
}

function visit(node: ExprNode, see: (node: ExprNode) => void): void {
  see(node);
  switch (node.type) {
    case 'call':
      for (const arg of node.args) visit(arg, see);
      return;
    case 'unary':
      visit(node.operand, see);
      return;
    case 'binary':
      visit(node.left, see);
      visit(node.right, see);
      return;
    case 'conditional':
      visit(node.test, see);
      visit(node.then, see);
      visit(node.otherwise, see);
      return;
  }
}

function parseAt(body: string, offset: number): ExprNode {
  try {
    return parseExpression(body);
  } catch (error) {
    if (!(error instanceof ExprError) || offset === 0) throw error;
    throw new ExprError(error.position + offset, error.reason.en, error.reason.zh);
  }
}

function shift(tree: ExprNode, offset: number): ExprNode {
  if (offset > 0) visit(tree, (node) => (node.position += offset));
  return tree;
}

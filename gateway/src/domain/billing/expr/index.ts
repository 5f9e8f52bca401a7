/** Billing expressions (new-api's `billing_expr`): a safe tokenizer, parser and evaluator, no eval. */
export { TOKEN_VARIABLES, type TokenVariable } from './ast.ts';
export {
  type CompiledExpression,
  compileExpression,
  type ExpressionRun,
  noTokens,
  type RequestRule,
  runExpression,
} from './compile.ts';
export { ExprError } from './error.ts';
export type { ExprContext } from './evaluate.ts';
export { MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_NODES } from './parser.ts';
export { printExpression } from './printer.ts';

/** Billing expressions (new-api's `billing_expr`): a safe tokenizer, parser and evaluator, no eval. */
export { TOKEN_VARIABLES, type TokenVariable } from './ast.ts';
export { type CompiledExpression, compileExpression, noTokens, runExpression } from './compile.ts';
export { ExprError } from './error.ts';
export type { ExprContext, ExprResult } from './evaluate.ts';
export { isTimeZone, MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_NODES } from './parser.ts';

/** The syntax tree of a billing expression. Every node keeps the offset it starts at, for error messages. */
export type ExprNode =
  | { type: 'number'; value: number; position: number }
  | { type: 'string'; value: string; position: number }
  | { type: 'boolean'; value: boolean; position: number }
  | { type: 'nil'; position: number }
  | { type: 'variable'; name: TokenVariable; position: number }
  | { type: 'call'; name: FunctionName; args: ExprNode[]; position: number }
  | { type: 'unary'; op: '-' | '+' | '!'; operand: ExprNode; position: number }
  | { type: 'binary'; op: BinaryOp; left: ExprNode; right: ExprNode; position: number }
  | { type: 'conditional'; test: ExprNode; then: ExprNode; otherwise: ExprNode; position: number };

export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '**'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '&&'
  | '||'
  | '??'
  | 'contains'
  | 'startsWith'
  | 'endsWith';

/**
 * The token counts an expression prices (new-api's names): prompt, completion, prompt length for tier
 * conditions, cache read, cache write (5 minutes, 1 hour), image in, audio in, image out, audio out.
 */
export const TOKEN_VARIABLES = ['p', 'c', 'len', 'cr', 'cc', 'cc1h', 'img', 'ai', 'img_o', 'ao'] as const;
export type TokenVariable = (typeof TOKEN_VARIABLES)[number];

/** Clock functions: the current time in the configured time zone, or in the zone given as argument. */
export const CLOCK_FUNCTIONS = ['hour', 'minute', 'weekday', 'month', 'day'] as const;
export type ClockFunction = (typeof CLOCK_FUNCTIONS)[number];

export const FUNCTIONS = [
  'tier',
  'fixed',
  'param',
  'header',
  'has',
  'max',
  'min',
  'abs',
  'ceil',
  'floor',
  ...CLOCK_FUNCTIONS,
] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

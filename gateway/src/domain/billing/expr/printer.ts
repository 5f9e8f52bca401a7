import type { BinaryOp, ExprNode } from './ast.ts';

const PRECEDENCE: Readonly<Record<BinaryOp, number>> = {
  '??': 1,
  '||': 2,
  '&&': 3,
  '==': 4,
  '!=': 4,
  '<': 5,
  '<=': 5,
  '>': 5,
  '>=': 5,
  contains: 5,
  startsWith: 5,
  endsWith: 5,
  '+': 6,
  '-': 6,
  '*': 7,
  '/': 7,
  '%': 7,
  '**': 8,
};

/** A subtree in one canonical spelling (double quotes, single spaces, only the parentheses needed): for logs. */
export function printExpression(node: ExprNode): string {
  switch (node.type) {
    case 'number':
      return String(node.value);
    case 'string':
      return JSON.stringify(node.value);
    case 'boolean':
      return String(node.value);
    case 'nil':
      return 'nil';
    case 'variable':
      return node.name;
    case 'call':
      return `${node.name}(${node.args.map(printExpression).join(', ')})`;
    case 'unary': {
      const operand = printExpression(node.operand);
      const grouped = node.operand.type === 'binary' || node.operand.type === 'conditional';
      return `${node.op}${grouped ? `(${operand})` : operand}`;
    }
    case 'conditional':
      return `${group(node.test, 0)} ? ${printExpression(node.then)} : ${printExpression(node.otherwise)}`;
    case 'binary': {
      const level = PRECEDENCE[node.op];
      // Left-associative but `**`: an operand at the same level keeps its parentheses on the other side.
      const left = group(node.left, node.op === '**' ? level + 1 : level);
      const right = group(node.right, node.op === '**' ? level : level + 1);
      return `${left} ${node.op} ${right}`;
    }
  }
}

function group(node: ExprNode, least: number): string {
  const text = printExpression(node);
  if (node.type === 'conditional') return `(${text})`;
  return node.type === 'binary' && PRECEDENCE[node.op] < least ? `(${text})` : text;
}

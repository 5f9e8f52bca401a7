import type { FastifyRequest } from 'fastify';
import { AppError, defineErrors } from '../errors.ts';

export const INPUT_ERRORS = defineErrors({
  malformed_text: {
    status: 400,
    message: {
      zh: '参数 {where} 含有不允许的字符（NUL 或不成对的代理字符）',
      en: 'The {where} contains a character that is not allowed (NUL or a lone surrogate)',
    },
  },
  nested_too_deep: {
    status: 400,
    message: { zh: '请求体嵌套超过 {max} 层', en: 'The request body is nested deeper than {max} levels' },
  },
});

/** Deeper than any record /api or /rest takes; deep enough for free-form JSON options (overrides, mappings). */
export const MAX_BODY_DEPTH = 32;

// A NUL byte (Postgres text cannot hold one) or a UTF-16 surrogate without its pair (not valid Unicode:
// it cannot be stored as UTF-8 and breaks every reader after us).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const malformed = (text: string) => text.includes('\u0000') || LONE_SURROGATE.test(text);

/**
 * The problem with a parsed value, if any: a malformed string (as a key or a value) or nesting deeper
 * than `maxDepth`. Walks with its own stack, so a 5,000-deep body cannot overflow ours.
 */
export function inputProblem(value: unknown, maxDepth: number): 'malformed_text' | 'nested_too_deep' | undefined {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item === 'string') {
      if (malformed(item)) return 'malformed_text';
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (depth >= maxDepth) return 'nested_too_deep';
    if (Array.isArray(item)) {
      for (const element of item) stack.push([element, depth + 1]);
      continue;
    }
    for (const [key, element] of Object.entries(item)) {
      if (malformed(key)) return 'malformed_text';
      stack.push([element, depth + 1]);
    }
  }
  return undefined;
}

/** Throws the refusal for a value that is malformed or too deep; `where` names the part (path, query, body, filter). */
export function assertWellFormed(value: unknown, where: string): void {
  const problem = inputProblem(value, MAX_BODY_DEPTH);
  if (problem === 'malformed_text') throw new AppError(INPUT_ERRORS.malformed_text, { where });
  if (problem) throw new AppError(INPUT_ERRORS.nested_too_deep, { max: MAX_BODY_DEPTH });
}

/**
 * A preValidation hook for /api, /rest and the task routes: path, query and body are refused before any
 * schema check or route code sees them when they hold text no store can keep or nesting no record has.
 * Each area's own error handler renders the refusal in its shape (the /api envelope, a 400 on /rest).
 */
export function guardInput(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  try {
    assertWellFormed(request.params, 'path');
    assertWellFormed(request.query, 'query');
    assertWellFormed(request.body, 'body');
  } catch (error) {
    done(error as Error);
    return;
  }
  done();
}

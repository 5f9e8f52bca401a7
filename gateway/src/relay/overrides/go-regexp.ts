/**
 * Channel settings carry regular expressions written for new-api, i.e. Go RE2 syntax. The common
 * subset is the same in JavaScript; these helpers bridge the differences admins actually use:
 * leading inline flags (`(?i)`), `(?P<name>…)` groups and `${1}` / `${name}` in replacements.
 */

const LEADING_FLAGS = /^\(\?([imsU]+)\)/;

/** Compiles a Go-style pattern; throws a SyntaxError (with a readable message) when it cannot. */
export function compileGoRegExp(pattern: string, extraFlags = ''): RegExp {
  let source = pattern;
  let flags = extraFlags;
  const leading = LEADING_FLAGS.exec(source);
  if (leading) {
    const goFlags = leading[1] ?? '';
    if (goFlags.includes('U')) throw new SyntaxError(`unsupported flag (?U) in ${pattern}`);
    for (const flag of goFlags) if (!flags.includes(flag)) flags += flag;
    source = source.slice(leading[0].length);
  }
  source = source.replaceAll('(?P<', '(?<');
  return new RegExp(source, flags);
}

/** Go's `${1}` and `${name}` replacement references in JavaScript's `$1` and `$<name>` form. */
export function goReplacement(template: string): string {
  return template.replace(/\$\{(\w+)\}/g, (_, name: string) => (/^\d+$/.test(name) ? `$${name}` : `$<${name}>`));
}

/**
 * Longest user text an admin's regular expression is run on. JavaScript's engine backtracks: a pattern
 * that is polynomial in its input (`(a|aa)*b`, `.*x.*y`) stalls the pod on a megabyte of prompt. Bounded,
 * such a pattern costs milliseconds; a longer text is not matched (test: false; replace: left as it is).
 */
export const REGEX_INPUT_LIMIT = 4096;

/** `pattern.test(text)` on a text of at most REGEX_INPUT_LIMIT characters; false on a longer one. */
export function testBounded(pattern: RegExp, text: string): boolean {
  return text.length <= REGEX_INPUT_LIMIT && pattern.test(text);
}

/** `text.replace(pattern, replacement)` on a text of at most REGEX_INPUT_LIMIT characters; a longer one as it is. */
export function replaceBounded(text: string, pattern: RegExp, replacement: string): string {
  return text.length <= REGEX_INPUT_LIMIT ? text.replace(pattern, replacement) : text;
}

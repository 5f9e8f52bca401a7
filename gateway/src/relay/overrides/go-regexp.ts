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

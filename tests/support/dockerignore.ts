// .dockerignore rules as Docker applies them to the build context: a pattern excludes the paths it matches
// and everything under them; `**` spans any number of folders, `*` and `?` stay within one.

export type IgnoreRule = (relativePath: string) => boolean;

function patternToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The rule a .dockerignore text describes. Exceptions (`!pattern`) are refused: the project uses none. */
export function parseDockerignore(text: string): IgnoreRule {
  const patterns = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      if (line.startsWith('!')) throw new Error(`.dockerignore exceptions are not supported by the replay: ${line}`);
      return patternToRegExp(line.replace(/^\/+/, '').replace(/\/+$/, ''));
    });
  return (relativePath) => {
    const parts = relativePath.split('/');
    // A pattern that matches a folder excludes everything below it.
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join('/');
      if (patterns.some((p) => p.test(prefix))) return true;
    }
    return false;
  };
}

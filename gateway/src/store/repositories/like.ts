/** A LIKE pattern matching `text` anywhere, with its wildcard characters taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Claude on Vertex is named `{model}@{date}` where Anthropic's API says `{model}-{date}`; these are the
 * ids that differ by more than that (the October 2024 Sonnet 3.5 is "v2" on Vertex).
 */
const CLAUDE_IDS: Readonly<Record<string, string>> = {
  'claude-3-5-sonnet-20241022': 'claude-3-5-sonnet-v2@20241022',
};

const DATED = /^(claude-.+)-(\d{8})$/;

export const isClaude = (model: string) => model.startsWith('claude-');

/** Vertex's id of a Claude model: claude-sonnet-4-20250514 → claude-sonnet-4@20250514; Vertex ids pass. */
export function vertexClaudeId(model: string): string {
  if (model.includes('@')) return model;
  const known = CLAUDE_IDS[model];
  if (known) return known;
  const dated = DATED.exec(model);
  return dated ? `${dated[1]}@${dated[2]}` : model;
}

/** The public name of a Vertex Claude id (what a region map is likely to name): the reverse of vertexClaudeId. */
export function publicClaudeId(model: string): string {
  const known = Object.entries(CLAUDE_IDS).find(([, id]) => id === model);
  return known ? known[0] : model.replace('@', '-');
}

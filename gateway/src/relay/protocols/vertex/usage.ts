import type { Usage, WireFormat } from '../../types.ts';
import { claudeUsageFromBody } from '../anthropic/index.ts';
import { geminiUsage } from '../gemini/index.ts';

/** Usage of a whole answer, read the way its publisher reports it (Claude's usage, Gemini's usageMetadata). */
export function vertexUsage(format: WireFormat, body: unknown): Usage | undefined {
  return format === 'claude-messages' ? claudeUsageFromBody(format, body) : geminiUsage(format, body);
}

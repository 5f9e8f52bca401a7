import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseClaudeError } from './errors.ts';
import { buildClaudeCountTokensRequest, buildClaudeRequest, prepareClaudeBody } from './request.ts';
import { ClaudeStreamObserver } from './stream.ts';
import { claudeUsageFromBody } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['claude-messages']);

/** Chat-like client formats an Anthropic upstream serves, converted to Claude Messages. */
const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/** Anthropic's Messages API (channel type 14) and upstreams that speak it. */
export const anthropicProvider: Provider = {
  name: 'anthropic',
  formats: FORMATS,
  nativeFormat: (format) => (CHAT_LIKE.has(format) ? 'claude-messages' : undefined),
  prepareBody: prepareClaudeBody,
  buildRequest: buildClaudeRequest,
  buildCountTokensRequest: buildClaudeCountTokensRequest,
  usageFromBody: claudeUsageFromBody,
  streamObserver: () => new ClaudeStreamObserver(),
  parseError: parseClaudeError,
};

export { parseClaudeError } from './errors.ts';
export { ANTHROPIC_BASE_URL, buildClaudeRequest, DEFAULT_ANTHROPIC_VERSION, prepareClaudeBody } from './request.ts';
export { ClaudeStreamObserver } from './stream.ts';
export { claudeUsage, claudeUsageFromBody } from './usage.ts';

import type { WireFormat } from '../../types.ts';
import { ClaudeStreamObserver } from '../anthropic/index.ts';
import { GeminiStreamObserver } from '../gemini/index.ts';
import type { StreamObserver } from '../types.ts';

/** Vertex streams each publisher's events unchanged: Claude's SSE events, or Gemini's `alt=sse` chunks. */
export function vertexStreamObserver(format: WireFormat): StreamObserver {
  return format === 'claude-messages' ? new ClaudeStreamObserver() : new GeminiStreamObserver();
}

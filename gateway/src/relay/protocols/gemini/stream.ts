import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { usageFromMetadata } from './usage.ts';

/**
 * Follows a Gemini stream (one GenerateContentResponse per event): the text of every part, thoughts
 * included, for estimating; function calls; and usageMetadata, which each chunk repeats and the last
 * one completes.
 */
export class GeminiStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const parsed = parsedData(event) as unknown;
    if (parsed === undefined) return;
    for (const chunk of Array.isArray(parsed) ? parsed : [parsed]) {
      if (typeof chunk !== 'object' || chunk === null) continue;
      const { candidates, usageMetadata } = chunk as { candidates?: unknown; usageMetadata?: unknown };
      for (const candidate of Array.isArray(candidates) ? candidates : []) {
        const parts = candidate?.content?.parts;
        for (const part of Array.isArray(parts) ? parts : []) {
          if (typeof part?.text === 'string') this.text += part.text;
          if (part?.functionCall) this.toolCalls++;
        }
      }
      this.usage = usageFromMetadata(usageMetadata) ?? this.usage;
    }
  }
}

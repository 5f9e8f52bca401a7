import { channelType } from '../../../domain/channels/registry.ts';
import { buildOpenAIRequest } from '../openai/request.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';

/**
 * Ollama's own API (`/api/chat`, `/api/embed`); legacy completions go to its OpenAI-compatible
 * `/v1`. The key is optional: a bearer key for a proxy in front of Ollama.
 */
export function buildOllamaRequest(input: BuildInput): UpstreamRequest {
  if (input.format !== 'ollama-chat' && input.format !== 'ollama-embed') return buildOpenAIRequest(input);
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (input.key) headers.authorization = `Bearer ${input.key}`;
  const path = input.format === 'ollama-chat' ? '/api/chat' : '/api/embed';
  return { url: `${base}${path}`, method: 'POST', headers, body: input.body };
}

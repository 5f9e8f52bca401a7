import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';

/** Ollama `/api/embed`: `{model, input}` answered with `{embeddings: [[…]], prompt_eval_count}`. */
export const ollamaEmbedAdapter: UpstreamAdapter = {
  format: 'ollama-embed',
  hub: 'openai-embeddings',
  requestFromHub: (body: Json) => ({
    input: body.input,
    ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}),
  }),
  responseToHub: (body: Json, ctx: ConvertContext) => {
    const prompt = Number(body.prompt_eval_count) || 0;
    return {
      object: 'list',
      model: ctx.model,
      data: (Array.isArray(body.embeddings) ? body.embeddings : []).map((embedding: unknown, index: number) => ({
        object: 'embedding',
        index,
        embedding,
      })),
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    };
  },
  streamToHub: (): StreamConverter => ({ push: () => [], end: () => [] }),
};

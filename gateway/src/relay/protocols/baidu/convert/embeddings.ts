import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import { isObject } from '../../upstream-json.ts';

/**
 * ERNIE v1 embeddings (`/wenxinworkshop/embeddings/{endpoint}`): `{input: [text…]}` answered with
 * OpenAI-like `{data: [{embedding, index}], usage}` but no model.
 */
export const baiduEmbeddingsAdapter: UpstreamAdapter = {
  format: 'baidu-embeddings',
  hub: 'openai-embeddings',
  requestFromHub: (body: Json) => {
    const input = Array.isArray(body.input) ? body.input : [body.input];
    return {
      input: input.filter((text: unknown) => typeof text === 'string'),
      ...(body.user ? { user_id: body.user } : {}),
    };
  },
  responseToHub: (body: Json, ctx: ConvertContext) => ({
    object: 'list',
    model: ctx.model,
    data: (Array.isArray(body.data) ? body.data : []).filter(isObject).map((item: Json, index: number) => ({
      object: 'embedding',
      index: typeof item.index === 'number' ? item.index : index,
      embedding: item.embedding,
    })),
    usage: {
      prompt_tokens: Number(body.usage?.prompt_tokens) || 0,
      total_tokens: Number(body.usage?.total_tokens) || 0,
    },
  }),
  streamToHub: (): StreamConverter => ({ push: () => [], end: () => [] }),
};

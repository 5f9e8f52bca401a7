import type { FastifyRequest } from 'fastify';

/**
 * The model list in the shape the asking client parses (reference §2.6): Anthropic's when the
 * request carries x-api-key and anthropic-version, Gemini's when it carries x-goog-api-key or
 * ?key=, OpenAI's otherwise.
 */
export type ModelListShape = 'openai' | 'anthropic' | 'gemini';

export function listShapeOf(request: FastifyRequest): ModelListShape {
  const headers = request.headers;
  if (headers['x-api-key'] && headers['anthropic-version']) return 'anthropic';
  const query = request.query as Record<string, unknown> | undefined;
  if (headers['x-goog-api-key'] || typeof query?.key === 'string') return 'gemini';
  return 'openai';
}

export function modelList(models: readonly string[], shape: ModelListShape): unknown {
  switch (shape) {
    case 'anthropic':
      return {
        data: models.map(anthropicModel),
        has_more: false,
        first_id: models[0] ?? null,
        last_id: models.at(-1) ?? null,
      };
    case 'gemini':
      return { models: models.map(geminiModel) };
    default:
      return { object: 'list', data: models.map(openAIModel) };
  }
}

export function oneModel(model: string, shape: ModelListShape): unknown {
  if (shape === 'anthropic') return anthropicModel(model);
  if (shape === 'gemini') return geminiModel(model);
  return openAIModel(model);
}

const openAIModel = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'tollgate' });

const anthropicModel = (id: string) => ({
  type: 'model',
  id,
  display_name: id,
  created_at: '1970-01-01T00:00:00Z',
});

const geminiModel = (id: string) => ({
  name: `models/${id}`,
  baseModelId: id,
  version: '001',
  displayName: id,
  description: id,
  supportedGenerationMethods: /embed/i.test(id)
    ? ['embedContent', 'batchEmbedContents']
    : ['generateContent', 'streamGenerateContent', 'countTokens'],
});

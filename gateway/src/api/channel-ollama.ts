import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CHANNEL_ERRORS } from '../domain/channels/errors.ts';
import { AppError } from '../errors.ts';
import { requestLanguage } from '../http/errors.ts';
import type { ChannelRouteDeps } from './channel.ts';
import { ok } from './envelope.ts';
import { idParams } from './schemas.ts';

const tags = ['channel'];

interface ModelBody {
  channel_id?: number;
  model_name?: string;
}

const modelBody = {
  type: 'object',
  properties: {
    channel_id: { type: 'integer', description: 'An Ollama channel (type 4)' },
    model_name: { type: 'string', maxLength: 512, description: 'The model, e.g. llama3.1:8b' },
  },
} as const;

/** The body's channel and model, both required. */
function target(body: ModelBody | undefined): { id: number; model: string } {
  const id = body?.channel_id ?? 0;
  const model = body?.model_name?.trim() ?? '';
  if (!id || !model) throw new AppError(CHANNEL_ERRORS.CHANNEL_OLLAMA_MODEL_REQUIRED);
  return { id, model };
}

const done = (request: FastifyRequest, model: string, action: { zh: string; en: string }) =>
  requestLanguage(request) === 'zh' ? `模型 ${model} ${action.zh}` : `Model ${model} ${action.en}`;

/**
 * /api/channel/ollama/*: an Ollama channel's models, managed from the console (new-api's routes):
 * pull (whole, or with progress as server-sent events), delete, and the server's version.
 */
export function ollamaRoutes(app: FastifyInstance, { guards, channels }: ChannelRouteDeps): void {
  const admin = { preValidation: guards.admin };

  app.post<{ Body: ModelBody }>(
    '/channel/ollama/pull',
    { ...admin, schema: { tags, summary: 'Pull a model onto an Ollama channel’s server', body: modelBody } },
    async (request) => {
      const { id, model } = target(request.body);
      await channels.pullOllamaModel(id, model);
      return ok(undefined, done(request, model, { zh: '拉取成功', en: 'pulled successfully' }));
    },
  );

  app.post<{ Body: ModelBody }>(
    '/channel/ollama/pull/stream',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Pull a model with progress',
        description:
          'Server-sent events: each of Ollama’s progress lines as `data: {status, digest, total, completed}`, ' +
          'then `data: {"message": …}` or `data: {"error": …}`, then `data: [DONE]`.',
        body: modelBody,
      },
    },
    async (request, reply) => {
      const { id, model } = target(request.body);
      const abort = new AbortController();
      // Refusals before the pull starts (not an Ollama channel, unknown channel) answer as usual.
      const progress = await channels.pullOllamaModelProgress(id, model, abort.signal);
      const raw = reply.raw;
      reply.hijack();
      raw.on('close', () => abort.abort());
      raw.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      const send = (data: unknown) => raw.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      try {
        for await (const line of progress) send(line);
        send({ message: done(request, model, { zh: '拉取成功', en: 'pulled successfully' }) });
      } catch (error) {
        const message =
          error instanceof AppError ? error.localized(requestLanguage(request)) : (error as Error).message;
        send({ error: message });
      }
      send('[DONE]');
      raw.end();
    },
  );

  app.delete<{ Body: ModelBody }>(
    '/channel/ollama/delete',
    { ...admin, schema: { tags, summary: 'Delete a model from an Ollama channel’s server', body: modelBody } },
    async (request) => {
      const { id, model } = target(request.body);
      await channels.deleteOllamaModel(id, model);
      return ok(undefined, done(request, model, { zh: '删除成功', en: 'deleted successfully' }));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/channel/ollama/version/:id',
    {
      ...admin,
      schema: { tags, summary: 'The version of an Ollama channel’s server', params: idParams('Channel id') },
    },
    async (request) => ok({ version: await channels.ollamaVersion(request.params.id) }),
  );
}

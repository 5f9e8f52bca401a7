import type { ServerResponse } from 'node:http';
import { serveMock } from './mock-server.ts';

/**
 * A local VolcEngine Ark: `POST /api/v3/chat/completions` serves model endpoints, and bot
 * applications (ids `bot-…`) only at `POST /api/v3/bots/chat/completions`, answering with
 * `bot_usage` beside the usual usage; an id on the wrong path is not found, as Ark answers it.
 */
export interface MockVolc {
  url: string;
  requests: Array<{ path: string; body: any }>;
  close(): Promise<void>;
}

export async function startMockVolc(key: string): Promise<MockVolc> {
  const requests: Array<{ path: string; body: any }> = [];
  const server = await serveMock(async (req, res, raw) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const body = raw.length ? JSON.parse(raw.toString()) : {};
    requests.push({ path, body });
    if (req.headers.authorization !== `Bearer ${key}`) {
      return json(res, 401, {
        error: {
          code: 'AuthenticationError',
          message: 'the API key in the request is missing or invalid',
          type: 'Unauthorized',
        },
      });
    }
    const bot = typeof body.model === 'string' && body.model.startsWith('bot-');
    const onBotsPath = path === '/api/v3/bots/chat/completions';
    if ((path !== '/api/v3/chat/completions' && !onBotsPath) || bot !== onBotsPath) {
      return json(res, 404, {
        error: {
          code: 'InvalidEndpointOrModel.NotFound',
          message: `The model or endpoint ${body.model} does not exist or you do not have access to it.`,
          type: 'NotFound',
        },
      });
    }
    const usage = { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28 };
    return json(res, 200, {
      id: '0217-mock',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: bot ? 'Hello from the bot.' : 'Hello from Doubao.' },
          finish_reason: 'stop',
        },
      ],
      usage,
      ...(bot ? { bot_usage: { model_usage: [{ name: 'doubao-pro-32k', ...usage }] } } : {}),
    });
  });
  return { ...server, requests };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

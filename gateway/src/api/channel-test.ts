import type { FastifyInstance } from 'fastify';
import type { ChannelTester } from '../relay/health/channel-test.ts';
import type { authGuards } from './auth.ts';
import { ok, say } from './envelope.ts';
import { idParams, text } from './schemas.ts';

export interface ChannelTestRouteDeps {
  guards: ReturnType<typeof authGuards>;
  tester: ChannelTester;
}

const tags = ['channel'];

/** Channel tests (reference §4.5): one channel answered at once, all channels in the background. */
export function channelTestRoutes(app: FastifyInstance, { guards, tester }: ChannelTestRouteDeps): void {
  const admin = { preValidation: guards.admin };

  app.get<{ Params: { id: number }; Querystring: { model?: string; endpoint_type?: string; stream?: boolean } }>(
    '/channel/test/:id',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Send one small request to a channel’s upstream and time it',
        description:
          'Answers {success, message, time (seconds), error_code?} at the top level, as new-api does. The test ' +
          'model is `model`, else the channel’s test_model, else its first model. The time is stored as the ' +
          'channel’s response_time; a failure goes through the auto-disable rules, a success re-enables a ' +
          'channel the gateway disabled when AutomaticEnableChannelEnabled is on. The log it leaves costs nothing.',
        params: idParams('Channel id'),
        querystring: {
          type: 'object',
          properties: {
            model: text('Model to test with', 512),
            endpoint_type: text('chat, responses, embeddings, images, rerank or realtime (new-api names accepted)', 64),
            stream: { type: 'boolean', description: 'Test a streamed answer' },
          },
        },
      },
    },
    async (request) => {
      const { model, endpoint_type: endpointType, stream } = request.query;
      return tester.test(request.params.id, { model, endpointType, stream });
    },
  );

  app.get(
    '/channel/test',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Test every channel not disabled by hand, in the background',
        description:
          'Answers at once; results land on the channels (response_time, test_time, status). Answers ' +
          'CHANNEL_TEST_RUNNING (409) while a run is going on.',
      },
    },
    async (request) => {
      void tester.startAll().catch((error: unknown) => request.log.warn({ err: error }, 'channel test run failed'));
      return ok(
        undefined,
        say(request, {
          zh: '已开始测试所有渠道，请稍后刷新页面查看结果',
          en: 'Testing every channel; refresh in a while to see the results',
        }),
      );
    },
  );
}

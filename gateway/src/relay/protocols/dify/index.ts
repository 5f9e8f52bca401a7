import type { WireFormat } from '../../types.ts';
import { CHAT_FORMATS } from '../hub-request.ts';
import type { Provider } from '../types.ts';
import { sendDify } from './assemble.ts';
import { parseDifyError } from './errors.ts';
import { buildDifyRequest, prepareDifyBody } from './request.ts';
import { DifyStreamObserver } from './stream.ts';
import { difyUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['dify-chat']);

/** Dify apps (chat, agent, workflow): `POST /v1/chat-messages` or `/v1/workflows/run` with the app's key. */
export const difyProvider: Provider = {
  name: 'dify',
  formats: FORMATS,
  nativeFormat: (format) => (format === 'dify-chat' || CHAT_FORMATS.has(format) ? 'dify-chat' : undefined),
  prepareBody: (_format, body, context) => ({
    body: prepareDifyBody(body, context),
    upstreamModel: context.upstreamModel,
  }),
  buildRequest: buildDifyRequest,
  send: sendDify,
  usageFromBody: (_format, body) => difyUsage(body),
  streamObserver: () => new DifyStreamObserver(),
  parseError: parseDifyError,
};

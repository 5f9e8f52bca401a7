import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { guardInput } from '../http/input-guard.ts';
import type { ChannelAffinity } from '../relay/affinity/channel-affinity.ts';
import type { ChannelTester } from '../relay/health/channel-test.ts';
import type { Services } from '../services.ts';
import { authGuards } from './auth.ts';
import { channelRoutes } from './channel.ts';
import { channelAffinityRoutes } from './channel-affinity.ts';
import { ollamaRoutes } from './channel-ollama.ts';
import { channelTestRoutes } from './channel-test.ts';
import { customOAuthRoutes } from './custom-oauth.ts';
import { dashboardRoutes } from './dashboard.ts';
import { dataRoutes } from './data.ts';
import { emailRoutes } from './email.ts';
import { sendFailure } from './envelope.ts';
import { logRoutes } from './log.ts';
import { modelCatalogueRoutes } from './model-catalogue.ts';
import { oauthRoutes } from './oauth.ts';
import { optionRoutes } from './option.ts';
import { passkeyRoutes } from './passkeys.ts';
import { prefillGroupRoutes } from './prefill-group.ts';
import { pricingRoutes } from './pricing.ts';
import { ipRateLimit } from './rate-limit.ts';
import { redemptionRoutes } from './redemption.ts';
import { setupRoutes } from './setup.ts';
import { statusRoutes } from './status.ts';
import { taskRoutes } from './task.ts';
import { tokenRoutes } from './token.ts';
import { topUpRoutes } from './topup.ts';
import { topUpHistoryRoutes } from './topup-history.ts';
import { twoFactorRoutes } from './two-factor.ts';
import { userRoutes } from './user.ts';
import { bindingRoutes } from './user-bindings.ts';
import { sessionRoutes } from './user-sessions.ts';

export interface ApiDeps {
  services: Services;
  rateLimits: Config['rateLimits'];
  /** Channel tests need the relay's upstream connections and routing index. */
  channelTester: ChannelTester;
  /** The relay's channel affinity map, for its statistics and clearing. */
  affinity: ChannelAffinity;
}

/** The /api/* routes in new-api's shapes; registered under the /api prefix. */
export async function apiPlugin(
  app: FastifyInstance,
  { services, rateLimits, channelTester, affinity }: ApiDeps,
): Promise<void> {
  const counters = services.cluster.counters;
  // Only these routes set cookies (sign-in, sign-out, OAuth state); cookies are read on demand (http/cookies.ts).
  await app.register(cookie, { hook: false });
  app.decorateRequest('auth', null);
  app.setErrorHandler(async (error, request, reply) => sendFailure(error, request, reply));
  app.addHook('onRequest', ipRateLimit(counters, 'api', rateLimits.globalApi));
  app.addHook('preValidation', guardInput);
  // The console and scripts must always see fresh answers (spec doc 1 §1: every call asks for no caching).
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  const guards = authGuards({
    db: services.store.db,
    sessions: services.sessions,
    keyring: services.keyring,
    twoFactor: services.twoFactor,
  });
  const critical = ipRateLimit(counters, 'critical', rateLimits.critical);
  statusRoutes(app, services.status, services.options);
  setupRoutes(app, services.setup);
  optionRoutes(app, { guards, options: services.options, pricing: services.pricing });
  pricingRoutes(app, {
    guards,
    options: services.options,
    pricing: services.pricing,
    catalogue: services.catalogue.models,
  });
  emailRoutes(app, {
    guards,
    critical,
    turnstile: services.turnstile,
    email: services.email,
  });
  oauthRoutes(app, {
    guards,
    critical,
    sessions: services.sessions,
    oauth: services.oauth,
    twoFactor: services.twoFactor,
  });
  userRoutes(app, {
    guards,
    critical,
    turnstile: services.turnstile,
    sessions: services.sessions,
    login: services.login,
    registration: services.registration,
    admin: services.userAdmin,
    self: services.self,
    options: services.options,
    keyring: services.keyring,
    periods: services.periods,
    twoFactor: services.twoFactor,
  });
  sessionRoutes(app, { guards, sessions: services.sessions, admin: services.userAdmin });
  bindingRoutes(app, { guards, db: services.store.db, admin: services.userAdmin });
  customOAuthRoutes(app, { guards, providers: services.customProviders });
  tokenRoutes(app, { guards, critical, tokens: services.tokens });
  redemptionRoutes(app, { guards, critical, redemptions: services.redemptions });
  topUpRoutes(app, { guards, critical, topUps: services.topUps });
  channelRoutes(app, { guards, channels: services.channels });
  ollamaRoutes(app, { guards, channels: services.channels });
  channelTestRoutes(app, { guards, tester: channelTester });
  logRoutes(app, { guards, logs: services.logs });
  channelAffinityRoutes(app, { guards, affinity });
  taskRoutes(app, { guards, tasks: services.tasks });
  topUpHistoryRoutes(app, { guards, critical, topUps: services.topUps });
  dataRoutes(app, { guards, dashboard: services.dashboard });
  prefillGroupRoutes(app, { guards, prefillGroups: services.prefillGroups });
  dashboardRoutes(app, { guards, turnstile: services.turnstile, checkins: services.checkins, uptime: services.uptime });
  modelCatalogueRoutes(app, { guards, catalogue: services.catalogue });
  twoFactorRoutes(app, {
    guards,
    critical,
    twoFactor: services.twoFactor,
    login: services.login,
    sessions: services.sessions,
  });
  passkeyRoutes(app, {
    guards,
    critical,
    passkeys: services.passkeys,
    login: services.login,
    sessions: services.sessions,
  });
}

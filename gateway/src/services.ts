import type { ClusterState } from './cluster/index.ts';
import type { Config } from './config.ts';
import { UserAdminService } from './domain/accounts/admin.ts';
import { EmailService } from './domain/accounts/email.ts';
import { LoginService } from './domain/accounts/login.ts';
import { type Mailer, SmtpMailer } from './domain/accounts/mailer.ts';
import { CustomProviderService } from './domain/accounts/oauth/custom-providers.ts';
import { OAuthService } from './domain/accounts/oauth/service.ts';
import { PasskeyService } from './domain/accounts/passkeys/service.ts';
import { RegistrationService } from './domain/accounts/registration.ts';
import { SelfService } from './domain/accounts/self.ts';
import { SessionService } from './domain/accounts/sessions.ts';
import { Turnstile } from './domain/accounts/turnstile.ts';
import { TwoFactorService } from './domain/accounts/two-factor/service.ts';
import { VerificationCodes } from './domain/accounts/verification.ts';
import { CatalogueService } from './domain/catalogue/service.ts';
import { CatalogueSync } from './domain/catalogue/sync.ts';
import { ChannelService } from './domain/channels/index.ts';
import { CheckinService } from './domain/checkins/index.ts';
import { DashboardDataService } from './domain/dashboard/service.ts';
import type { Keyring } from './domain/keyring.ts';
import type { PeriodBudget } from './domain/ledger/periods/budget.ts';
import { LogMaintenance, LogService } from './domain/logs/index.ts';
import { Notifier } from './domain/notifications.ts';
import type { OptionsService } from './domain/options/index.ts';
import { TopUpService } from './domain/payments/service.ts';
import { PrefillGroupService } from './domain/prefill-groups/service.ts';
import type { PricingService } from './domain/pricing/service.ts';
import { RedemptionService } from './domain/redemptions/index.ts';
import { SetupService } from './domain/setup.ts';
import { StatusService } from './domain/status.ts';
import { TaskService } from './domain/tasks/index.ts';
import { TokenService } from './domain/tokens/index.ts';
import { UptimeService } from './domain/uptime/index.ts';
import { OutboundGuard } from './http/outbound/guard.ts';
import { fetchSettings } from './http/outbound/policy.ts';
import type { Store } from './store/index.ts';

export interface Services {
  store: Store;
  cluster: ClusterState;
  options: OptionsService;
  keyring: Keyring;
  pricing: PricingService;
  setup: SetupService;
  status: StatusService;
  sessions: SessionService;
  verification: VerificationCodes;
  registration: RegistrationService;
  login: LoginService;
  userAdmin: UserAdminService;
  self: SelfService;
  /** TOTP two-factor sign-in, step-up verification and the admin rule (domain/accounts/two-factor). */
  twoFactor: TwoFactorService;
  /** Passkeys: WebAuthn registration, sign-in and step-up (domain/accounts/passkeys). */
  passkeys: PasskeyService;
  turnstile: Turnstile;
  mailer: Mailer;
  email: EmailService;
  oauth: OAuthService;
  customProviders: CustomProviderService;
  notifier: Notifier;
  /** Fetches of user-supplied URLs (webhooks, notifyHooks, result images), under fetch_setting.*. */
  outbound: OutboundGuard;
  channels: ChannelService;
  tokens: TokenService;
  redemptions: RedemptionService;
  checkins: CheckinService;
  uptime: UptimeService;
  topUps: TopUpService;
  prefillGroups: PrefillGroupService;
  dashboard: DashboardDataService;
  logs: LogService;
  logMaintenance: LogMaintenance;
  tasks: TaskService;
  /** Daily, weekly and monthly quotas of tokens and users (domain/ledger/periods). */
  periods: PeriodBudget;
  /** Model and vendor metadata, and its upstream sync (issue 19). */
  catalogue: { models: CatalogueService; sync: CatalogueSync };
}

type ServiceConfig = Pick<Config, 'version' | 'sessionTtlMs' | 'turnstileVerifyUrl' | 'oauth' | 'notifyLimit'>;

/** The composition root of the domain: every service, wired to its dependencies once. */
export function createServices(
  config: ServiceConfig,
  deps: {
    store: Store;
    cluster: ClusterState;
    options: OptionsService;
    keyring: Keyring;
    pricing: PricingService;
    periods: PeriodBudget;
  },
): Services {
  const { store, cluster, options, keyring, periods } = deps;
  const db = store.db;
  const setup = new SetupService({
    db,
    databaseType: store.kind,
    version: config.version,
    saveOptions: (entries) => options.setMany(entries),
  });
  const sessions = new SessionService(db, config.sessionTtlMs);
  const verification = new VerificationCodes(cluster);
  const registration = new RegistrationService({
    db,
    options,
    consumeEmailCode: (purpose, email, code) => verification.consume(purpose, email, code),
  });
  const mailer = new SmtpMailer(options);
  const login = new LoginService({ db, options, sessions });
  const logs = new LogService({ db, options });
  const outbound = new OutboundGuard({ settings: () => fetchSettings(options) });
  const passkeys = new PasskeyService({ db, options, kv: cluster.kv });
  const customProviders = new CustomProviderService({ db, keyring, outbound, timeoutMs: config.oauth.timeoutMs });
  return {
    ...deps,
    setup,
    status: new StatusService({
      options,
      setup,
      customProviders,
      version: config.version,
      startTime: Math.floor(Date.now() / 1000),
    }),
    sessions,
    verification,
    registration,
    login,
    userAdmin: new UserAdminService({ db, sessions, registration, bus: cluster.bus }),
    self: new SelfService({ db, options, sessions, keyring, outbound, bus: cluster.bus }),
    twoFactor: new TwoFactorService({ db, keyring, options, passkeys }),
    passkeys,
    turnstile: new Turnstile(options, config.turnstileVerifyUrl),
    mailer,
    email: new EmailService({ db, options, verification, mailer, sessions }),
    oauth: new OAuthService({ db, options, cluster, registration, login, endpoints: config.oauth, customProviders }),
    customProviders,
    notifier: new Notifier({ mailer, keyring, counters: cluster.counters, outbound, limit: config.notifyLimit }),
    outbound,
    channels: new ChannelService({
      db,
      keyring,
      bus: cluster.bus,
      usdExchangeRate: () => options.getNumber('USDExchangeRate'),
    }),
    tokens: new TokenService({ db, options, keyring, bus: cluster.bus, periods }),
    redemptions: new RedemptionService({ db, options }),
    checkins: new CheckinService({ db, options }),
    uptime: new UptimeService({ options }),
    topUps: new TopUpService({ db, options }),
    prefillGroups: new PrefillGroupService({ db }),
    dashboard: new DashboardDataService({ db }),
    logs,
    logMaintenance: new LogMaintenance({ db, logs, options, vacuum: store.kind === 'pglite' }),
    catalogue: {
      models: new CatalogueService({ db, pricing: deps.pricing }),
      sync: new CatalogueSync({ db, options, pricing: deps.pricing, outbound }),
    },
    tasks: new TaskService({
      db,
      imageBase: () =>
        options.getBoolean('MjForwardUrlEnabled') ? options.get('ServerAddress').replace(/\/+$/, '') : undefined,
    }),
  };
}

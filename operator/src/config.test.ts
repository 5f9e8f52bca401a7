import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const noFile = () => {
  throw new Error('ENOENT');
};
const base = { DATABASE_URL: 'postgres://db/tollgate' };

describe('loadConfig', () => {
  it('has defaults for everything but the database', () => {
    expect(loadConfig(base, noFile, 'abc123')).toMatchObject({
      watchNamespaces: [],
      instance: 'tollgate',
      claimUnlabelled: true,
      accessTokenUsers: {},
      databaseUrl: 'postgres://db/tollgate',
      databasePoolMax: 5,
      redisUrl: undefined,
      redisNamespace: 'tollgate',
      leaseNamespace: 'default',
      leaseName: 'tollgate-operator',
      leaderElection: true,
      gatewayBaseUrl: '',
      resyncMs: 300_000,
      metricsPort: 8081,
      logLevel: 'info',
      workers: 2,
    });
  });

  it('reads the chart environment', () => {
    const config = loadConfig(
      {
        ...base,
        WATCH_NAMESPACES: 'ai, jobs,ai,',
        INSTANCE_NAME: 'blue',
        CLAIM_UNLABELLED: 'false',
        ACCESS_TOKEN_USERS: '{"jobs":["batch"],"*":["reader"]}',
        REDIS_URL: 'redis://redis:6379',
        POD_NAME: 'tollgate-operator-7d9f',
        POD_NAMESPACE: 'tollgate',
        GATEWAY_BASE_URL: 'http://tollgate.tollgate.svc:3000/',
        RESYNC_SECONDS: '60',
        METRICS_PORT: '9090',
        RECONCILE_WORKERS: '4',
      },
      noFile,
      'abc123',
    );
    expect(config).toMatchObject({
      watchNamespaces: ['ai', 'jobs'],
      instance: 'blue',
      claimUnlabelled: false,
      accessTokenUsers: { jobs: ['batch'], '*': ['reader'] },
      redisUrl: 'redis://redis:6379',
      identity: 'tollgate-operator-7d9f_abc123',
      leaseNamespace: 'tollgate',
      gatewayBaseUrl: 'http://tollgate.tollgate.svc:3000',
      resyncMs: 60_000,
      metricsPort: 9090,
      workers: 4,
    });
  });

  it('takes the Lease namespace from the service account when POD_NAMESPACE is unset', () => {
    expect(loadConfig(base, () => 'from-sa\n').leaseNamespace).toBe('from-sa');
  });

  it('refuses bad values, naming the variable', () => {
    expect(() => loadConfig({}, noFile)).toThrow(/DATABASE_URL is required/);
    expect(() => loadConfig({ ...base, RESYNC_SECONDS: '0' }, noFile)).toThrow(/RESYNC_SECONDS/);
    expect(() => loadConfig({ ...base, METRICS_PORT: 'http' }, noFile)).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REDIS_URL: 'localhost:6379' }, noFile)).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ ...base, SECRET_KEY: 'short' }, noFile)).toThrow(/SECRET_KEY/);
    expect(() => loadConfig({ ...base, LEADER_ELECTION: 'maybe' }, noFile)).toThrow(/LEADER_ELECTION/);
    expect(() => loadConfig({ ...base, WATCH_NAMESPACES: 'ai,Not_A_Namespace' }, noFile)).toThrow(
      /WATCH_NAMESPACES: "Not_A_Namespace"/,
    );
    expect(() => loadConfig({ ...base, INSTANCE_NAME: 'a b' }, noFile)).toThrow(/INSTANCE_NAME/);
    expect(() => loadConfig({ ...base, CLAIM_UNLABELLED: 'yes' }, noFile)).toThrow(/CLAIM_UNLABELLED/);
    expect(() => loadConfig({ ...base, ACCESS_TOKEN_USERS: '{jobs: [batch]}' }, noFile)).toThrow(
      /ACCESS_TOKEN_USERS must be JSON/,
    );
    expect(() => loadConfig({ ...base, ACCESS_TOKEN_USERS: '["root"]' }, noFile)).toThrow(/ACCESS_TOKEN_USERS/);
    expect(() => loadConfig({ ...base, ACCESS_TOKEN_USERS: '{"jobs":"batch"}' }, noFile)).toThrow(
      /ACCESS_TOKEN_USERS\["jobs"\]/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('the private port and migration settings', () => {
  it('default to port 9090 on HOST and migrating at start', () => {
    const config = loadConfig({ HOST: '10.0.0.5' });
    expect(config).toMatchObject({ metricsPort: 9090, metricsHost: '10.0.0.5', migrateOnStart: true });
    expect(loadConfig({}).metricsHost).toBe('0.0.0.0');
  });

  it('take METRICS_PORT, METRICS_HOST and MIGRATE_ON_START from the environment', () => {
    const config = loadConfig({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', MIGRATE_ON_START: 'false' });
    expect(config).toMatchObject({ metricsPort: 0, metricsHost: '127.0.0.1', migrateOnStart: false });
    // Both on "any free port" is fine: they get different ones.
    expect(loadConfig({ PORT: '0', METRICS_PORT: '0' }).metricsPort).toBe(0);
  });

  it('refuse bad values, naming the variable', () => {
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT must be an integer between 0 and 65535/);
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(ConfigError);
    expect(() => loadConfig({ MIGRATE_ON_START: 'yes' })).toThrow(/MIGRATE_ON_START must be true or false/);
  });
});

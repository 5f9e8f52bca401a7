import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePrice } from '../../gateway/src/domain/billing/index.ts';
import { applyManagedGroup } from '../../gateway/src/domain/groups/managed.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { eventually } from '../support/wait.ts';

// Group custom resources reach billing and the group lists through the group options: what the
// operator writes into `groups` is laid over GroupRatio, GroupGroupRatio and UserUsableGroups.
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('groups declared by custom resources', () => {
  it('set group ratios, per-user-group ratios and selectable groups, leaving the stored options alone', async () => {
    const owner = { namespace: 'ai', name: 'team', uid: 'uid-team' };
    const applied = await applyManagedGroup({ db: gateway.store.db, bus: gateway.cluster.bus }, owner, {
      name: 'team',
      ratio: 0.5,
      description: 'Team group',
      selectable: true,
      userGroupRatios: { vip: 0.25 },
    });
    expect(applied).toMatchObject({ ok: true });
    const ratios = await eventually(
      async () => gateway.options.getJson<Record<string, number>>('GroupRatio'),
      (map) => map.team === 0.5,
      2000,
    );
    expect(ratios).toMatchObject({ team: 0.5, default: 1 });
    expect(gateway.options.getJson<Record<string, Record<string, number>>>('GroupGroupRatio').vip).toMatchObject({
      team: 0.25,
    });
    // A user may now pick it for tokens.
    const groups = await root.get('/api/user/self/groups');
    expect(groups.body.data.team).toMatchObject({ desc: 'Team group', ratio: 0.5 });
    // Billing sees both ratios.
    const price = (userGroup: string) =>
      resolvePrice({
        model: 'm',
        usingGroup: 'team',
        userGroup,
        maps: { ModelRatio: { m: 1 }, CompletionRatio: {}, ModelPrice: {}, CacheRatio: {}, CreateCacheRatio: {} },
        options: gateway.options,
        acceptUnset: false,
      }).groupRatio;
    expect(price('default')).toBe(0.5);
    expect(price('vip')).toBe(0.25);
    // The stored option, which administrators edit, is what they wrote.
    expect(JSON.parse(gateway.options.get('GroupRatio'))).not.toHaveProperty('team');
  });
});

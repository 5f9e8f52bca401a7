import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryClusterState, type MemoryClusterState } from '../../cluster/index.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import { StreamBroken, UpstreamFailure } from '../exchange/failure.ts';
import type { RoutingIndex } from '../routing/index-cache.ts';
import { snapshot } from '../routing/test-support.ts';
import { circuitVerdict, passCircuit } from './circuit-gate.ts';
import { Circuits, type CircuitTransition, countsAsCircuitFailure } from './circuits.ts';

/** The circuit_setting options a test sets, the rest at their defaults. */
function fakeOptions(values: Record<string, number | boolean>): OptionsService {
  const all: Record<string, number | boolean> = {
    'circuit_setting.enabled': true,
    'circuit_setting.failure_threshold': 3,
    'circuit_setting.window_seconds': 60,
    'circuit_setting.cooldown_seconds': 30,
    'circuit_setting.max_cooldown_seconds': 100,
    ...values,
  };
  return {
    getNumber: (key: string) => all[key] as number,
    getBoolean: (key: string) => all[key] as boolean,
  } as unknown as OptionsService;
}

let clock = 1_000_000;
let clusters: MemoryClusterState[] = [];
let pods: Circuits[] = [];
let transitions: CircuitTransition[] = [];

/** A pod: its own cluster client and circuits, sharing one namespace (one "Redis") with the others. */
async function pod(namespace: string, options = fakeOptions({})): Promise<Circuits> {
  const cluster = createMemoryClusterState({ namespace });
  clusters.push(cluster);
  const circuits = new Circuits({ cluster, options, now: () => clock, onTransition: (t) => transitions.push(t) });
  await circuits.start();
  pods.push(circuits);
  return circuits;
}

/** Bus messages arrive later, never inside publish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
const ticket = (probe = false) => ({ channelId: 7, keyIndex: 0, model: 'gpt-4o', probe });

beforeEach(() => {
  clock = 1_000_000;
  transitions = [];
});

afterEach(async () => {
  for (const circuits of pods) await circuits.close();
  for (const cluster of clusters) await cluster.close();
  pods = [];
  clusters = [];
});

describe('countsAsCircuitFailure', () => {
  it('counts server errors, timeouts, rate limits and key problems, not the request’s own 4xx', () => {
    for (const status of [500, 502, 503, 504, 429, 408, 401, 403, 0]) expect(countsAsCircuitFailure(status)).toBe(true);
    for (const status of [400, 404, 413, 422]) expect(countsAsCircuitFailure(status)).toBe(false);
  });
});

describe('Circuits', () => {
  it('opens after the threshold of failures within the window, on every pod', async () => {
    const a = await pod('c1');
    const b = await pod('c1');
    await a.failed(ticket());
    await b.failed(ticket());
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
    await a.failed(ticket());
    await settle();
    expect(a.state(7, 0, 'gpt-4o')).toBe('open');
    expect(b.state(7, 0, 'gpt-4o')).toBe('open');
    // Other keys and models have circuits of their own.
    expect(b.state(7, 1, 'gpt-4o')).toBe('closed');
    expect(b.state(7, 0, 'other')).toBe('closed');
    expect(transitions).toEqual([{ channelId: 7, from: 'closed', to: 'open' }]);
    expect(b.blockedSince(7, 1, 'gpt-4o')).toBe(clock);
    expect(b.blockedSince(7, 2, 'gpt-4o')).toBeUndefined();
    expect(b.openCounts().get(7)).toBe(1);
  });

  it('forgets failures older than the window', async () => {
    // The counters keep real time: a 1 s window lets the first two failures go.
    const short = await pod('c2', fakeOptions({ 'circuit_setting.window_seconds': 1 }));
    await short.failed(ticket());
    await short.failed(ticket());
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await short.failed(ticket());
    await short.failed(ticket());
    expect(short.state(7, 0, 'gpt-4o')).toBe('closed');
    await short.failed(ticket());
    expect(short.state(7, 0, 'gpt-4o')).toBe('open');
  });

  it('lets exactly one request across pods probe a half-open circuit; success closes it everywhere', async () => {
    const a = await pod('c3');
    const b = await pod('c3');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    await settle();
    expect(await b.admit(7, 0, 'gpt-4o')).toBeUndefined();
    clock += 30_000;
    expect(a.state(7, 0, 'gpt-4o')).toBe('half_open');
    expect(a.blockedSince(7, 1, 'gpt-4o')).toBeUndefined();
    const tickets = await Promise.all([a.admit(7, 0, 'gpt-4o'), b.admit(7, 0, 'gpt-4o'), b.admit(7, 0, 'gpt-4o')]);
    const probes = tickets.filter((t) => t !== undefined);
    expect(probes).toHaveLength(1);
    expect(probes[0]?.probe).toBe(true);
    // The pods that lost the race pass the channel over while the probe is under way.
    const loser = tickets[0] === undefined ? a : b;
    expect(loser.blockedSince(7, 1, 'gpt-4o')).toBeDefined();
    await (tickets[0] ? a : b).succeeded(probes[0]!);
    await settle();
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
    expect(b.state(7, 0, 'gpt-4o')).toBe('closed');
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['closed>open', 'open>half_open', 'half_open>closed']);
    // Failures from before the closing do not count: it takes the full threshold again.
    await a.failed(ticket());
    await a.failed(ticket());
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
  });

  it('reopens after a failed probe with a doubled cooldown, capped at the maximum', async () => {
    const a = await pod('c4');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    const cooldowns: number[] = [];
    for (let round = 0; round < 3; round++) {
      const openedAt = clock;
      while (a.state(7, 0, 'gpt-4o') === 'open') clock += 1000;
      cooldowns.push(clock - openedAt);
      const probe = await a.admit(7, 0, 'gpt-4o');
      expect(probe?.probe).toBe(true);
      await a.failed(probe!);
      expect(a.state(7, 0, 'gpt-4o')).toBe('open');
    }
    expect(cooldowns).toEqual([30_000, 60_000, 100_000]);
  });

  it('frees the probe of a request that got no verdict', async () => {
    const a = await pod('c5');
    const b = await pod('c5');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    await settle();
    clock += 30_000;
    const probe = await a.admit(7, 0, 'gpt-4o');
    expect(probe).toBeDefined();
    expect(await b.admit(7, 0, 'gpt-4o')).toBeUndefined();
    await a.released(probe!);
    clock += 2_000;
    expect((await b.admit(7, 0, 'gpt-4o'))?.probe).toBe(true);
  });

  it('lets a fallback through an open circuit, and its success closes it', async () => {
    const a = await pod('c6');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    const fallback = await a.admit(7, 0, 'gpt-4o', true);
    expect(fallback?.probe).toBe(true);
    await a.succeeded(fallback!);
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
  });

  it('passes keys with open circuits over, keeps the channel while one key is closed', async () => {
    const a = await pod('c7');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    const base = { cursor: 0, disabled: new Set<number>() };
    const state = a.keyStateAvoidingOpen(7, 3, 'gpt-4o', base);
    expect([...(state?.disabled ?? [])]).toEqual([0]);
    state!.cursor = 2;
    expect(base.cursor).toBe(2);
    expect(a.blockedSince(7, 3, 'gpt-4o', base)).toBeUndefined();
    // Keys 1 and 2 disabled by the gateway: the one enabled key is open, so is the channel.
    expect(a.blockedSince(7, 3, 'gpt-4o', { cursor: 0, disabled: new Set([1, 2]) })).toBe(clock);
  });

  it('does nothing while circuit_setting.enabled is off', async () => {
    const a = await pod('c8', fakeOptions({ 'circuit_setting.enabled': false }));
    for (let i = 0; i < 5; i++) await a.failed(ticket());
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
    expect(a.blockedSince(7, 1, 'gpt-4o')).toBeUndefined();
  });

  it('loads the circuits open before it started', async () => {
    const a = await pod('c9');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    const late = await pod('c9');
    expect(late.state(7, 0, 'gpt-4o')).toBe('open');
  });
});

describe('the circuit gate of an attempt', () => {
  const routing = { keyState: () => undefined } as unknown as RoutingIndex;
  const channel = snapshot(7, { keys: ['sk-a', 'sk-b'], multiKeyMode: 'polling' });

  it('passes over a key whose circuit is open and lets one request probe a half-open one', async () => {
    const a = await pod('g1');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    for (let i = 0; i < 4; i++) expect((await passCircuit(a, routing, channel, 'gpt-4o', false))?.keyIndex).toBe(1);
    clock += 30_000;
    // Polling from key 0 again: the half-open key 0 is tried, and only the first request gets its probe.
    const passes = [];
    for (let i = 0; i < 4; i++) passes.push(await passCircuit(a, routing, channel, 'gpt-4o', false));
    expect(passes.filter((pass) => pass?.ticket?.probe)).toHaveLength(1);
    expect(passes.filter((pass) => pass === undefined).length).toBeLessThanOrEqual(1);
    // A forced pass (pinned, fallback) goes through an open circuit as a probe without exclusivity.
    const forced = await passCircuit(a, routing, snapshot(7, { keys: ['sk-a'] }), 'gpt-4o', true);
    expect(forced?.ticket?.probe).toBe(true);
  });

  it('tells the circuit what the failure says', async () => {
    const a = await pod('g2');
    const upstream = (status: number) =>
      new UpstreamFailure({ status, code: null, message: 'x', type: 'upstream_error' }, channel, 0);
    for (const status of [400, 404, 422]) await circuitVerdict(a, ticket(), upstream(status));
    await circuitVerdict(a, ticket(), new Error('refused before the upstream'));
    expect(a.state(7, 0, 'gpt-4o')).toBe('closed');
    await circuitVerdict(a, ticket(), upstream(502));
    await circuitVerdict(a, ticket(), upstream(429));
    await circuitVerdict(a, ticket(), new StreamBroken(new Error('reset')));
    expect(a.state(7, 0, 'gpt-4o')).toBe('open');
  });
});

describe('a failed fallback', () => {
  it('restarts the cooldown at the same level, counting no transition', async () => {
    const a = await pod('f1');
    for (let i = 0; i < 3; i++) await a.failed(ticket());
    clock += 10_000;
    const fallback = await a.admit(7, 0, 'gpt-4o', true);
    await a.failed(fallback!);
    clock += 29_000;
    expect(a.state(7, 0, 'gpt-4o')).toBe('open');
    clock += 1_000;
    expect(a.state(7, 0, 'gpt-4o')).toBe('half_open');
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['closed>open']);
  });
});

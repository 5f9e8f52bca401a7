/**
 * Every relay outcome reaches tollgate_relay_requests_total and the gen_ai duration histogram — a
 * failing upstream, a refused key, a success, a client that leaves, a stream the upstream stalls — and
 * every channel test reaches tollgate_channel_tests_total. The scraped counters are then fed to
 * promtool, which evaluates the error-rate alert's expression on them.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { parseSamples, type Sample, scrapeMetrics } from '../support/metrics.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import { promtool, RULES_FILE, runPromtool } from '../support/promtool.ts';
import { eventually } from '../support/wait.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let good: MockOpenAI;
let failing: MockOpenAI;
/** An upstream that takes requests and never answers them. */
let silent: MockServer;
let apiKey: string;
const channels = { good: 0, failing: 0, silent: 0 };

beforeAll(async () => {
  good = await startMockOpenAI();
  failing = await startMockOpenAI();
  failing.behaviour = { failWith: { status: 500, message: 'the model is overloaded', times: 1_000_000 } };
  silent = await serveMock(() => new Promise(() => {}));
  const database = await createTestDatabase();
  drop = database.drop;
  // An upstream silent for more than a second is given up on (the timeout tests).
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { RELAY_TIMEOUT_SECONDS: '1', STREAMING_TIMEOUT_SECONDS: '1' }),
  );
  root = await setupRoot(gateway.url);
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ 'metrics-ok': 1, 'metrics-fail': 1, 'metrics-silent': 1 }),
    AutomaticDisableChannelEnabled: 'false',
  });
  for (const [name, upstream, model] of [
    ['good', good, 'metrics-ok'],
    ['failing', failing, 'metrics-fail'],
    ['silent', silent, 'metrics-silent'],
  ] as const) {
    const created = await root.post('/api/channel/', {
      name,
      type: 1,
      key: 'sk-metrics-7Qv2xL9p',
      base_url: upstream.url,
      models: model,
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    channels[name] = created.body.data.id;
  }
  apiKey = (await root.post('/api/token/', { name: 'metrics', unlimited_quota: true })).body.data.key;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await good?.close();
  await failing?.close();
  await silent?.close();
});

function chat(model: string, key = apiKey, extra: Record<string, unknown> = {}) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
}

const relayRequests = async () => parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_requests_total');

/** The value of the one sample whose labels include `labels` (0 when there is none). */
function sampleValue(samples: Sample[], labels: Record<string, string>): number {
  const found = samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length, `samples matching ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value ?? 0;
}

/** Reads the counters until the expected samples are there (a response is counted when it closes). */
function relayRequestsOnceCounted(expected: Array<Record<string, string>>) {
  return eventually(relayRequests, (samples) => expected.every((labels) => sampleValue(samples, labels) > 0), 3000);
}

const FAILED = { model: 'metrics-fail', group: 'default', status: '5xx', error_type: 'upstream' };
const REFUSED = { model: 'unknown', channel: 'none', group: 'unknown', status: '4xx', error_type: 'auth' };
const SUCCEEDED = { model: 'metrics-ok', group: 'default', status: '2xx', error_type: 'none' };

describe('relay outcomes in the metrics', () => {
  it('counts a failing upstream call, a refused key and a success, each once, with its status class', async () => {
    expect((await chat('metrics-fail')).status).toBe(500);
    expect((await chat('metrics-ok', 'sk-not-a-key')).status).toBe(401);
    expect((await chat('metrics-ok')).status).toBe(200);

    const samples = await relayRequestsOnceCounted([FAILED, REFUSED, SUCCEEDED]);
    expect(sampleValue(samples, { ...FAILED, channel: String(channels.failing), format: 'openai-chat' })).toBe(1);
    expect(sampleValue(samples, { ...REFUSED, format: 'openai-chat' })).toBe(1);
    expect(sampleValue(samples, { ...SUCCEEDED, channel: String(channels.good), format: 'openai-chat' })).toBe(1);
    expect(samples.reduce((sum, s) => sum + s.value, 0)).toBe(3);

    const text = await scrapeMetrics(gateway);
    const durations = parseSamples(text, 'gen_ai_server_request_duration_seconds_count');
    expect(sampleValue(durations, { gen_ai_request_model: 'metrics-fail', error_type: 'upstream' })).toBe(1);
    expect(sampleValue(durations, { gen_ai_request_model: 'unknown', error_type: 'auth' })).toBe(1);
    expect(sampleValue(durations, { gen_ai_request_model: 'metrics-ok', error_type: 'none' })).toBe(1);
    // Only the success is billed: tokens and time to first token belong to answers.
    expect(parseSamples(text, 'gen_ai_server_time_to_first_token_seconds_count').map((s) => s.labels)).toEqual([
      expect.objectContaining({ gen_ai_request_model: 'metrics-ok' }),
    ]);
    expect(sampleValue(parseSamples(text, 'tollgate_relay_in_flight_requests'), {})).toBe(0);
  });

  it.runIf(promtool)(
    'turns the scraped counters into series on which the error-rate alert expression is above 0',
    async () => {
      const samples = await relayRequests();
      const rules = parse(readFileSync(RULES_FILE, 'utf8')) as {
        groups: Array<{ rules: Array<{ alert?: string; expr: string }> }>;
      };
      const alert = rules.groups.flatMap((g) => g.rules).find((rule) => rule.alert === 'TollgateHighErrorRate');
      expect(alert).toBeDefined();
      // What Prometheus would hold: each counter at 0 five minutes ago and at its scraped value now, with
      // the namespace its scrape target adds.
      const series = samples.map(({ labels, value }) => ({
        series: `tollgate_relay_requests_total{${Object.entries({ ...labels, namespace: 'tg' })
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(', ')}}`,
        values: `0x4 ${value}`,
      }));
      const dir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-promtool-'));
      try {
        const file = path.join(dir, 'scraped.test.yaml');
        await writeFile(
          file,
          stringify({
            rule_files: [RULES_FILE],
            evaluation_interval: '1m',
            tests: [
              {
                interval: '1m',
                input_series: series,
                promql_expr_test: [
                  {
                    expr: `(${alert!.expr.trim()}) > bool 0`,
                    eval_time: '5m',
                    exp_samples: [{ labels: '{namespace="tg"}', value: 1 }],
                  },
                ],
              },
            ],
          }),
        );
        const { status, output } = runPromtool(['test', 'rules', file]);
        expect(status, output).toBe(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it('counts a client that leaves mid-stream as client_closed', async () => {
    good.behaviour = { chunkDelayMs: 200 };
    const response = await chat('metrics-ok', apiKey, { stream: true });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    const closed = { model: 'metrics-ok', status: '2xx', error_type: 'client_closed' };
    const samples = await relayRequestsOnceCounted([closed]);
    expect(sampleValue(samples, { ...closed, channel: String(channels.good) })).toBe(1);
    // No longer in flight either: the gauge follows the connection, not the answer.
    const inFlight = parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_in_flight_requests');
    expect(sampleValue(inFlight, {})).toBe(0);
    good.behaviour = {};
  });

  it('counts a stream the upstream stalls as a timeout, and ends it with an upstream_timeout error', async () => {
    good.behaviour = { chunkDelayMs: 1500 };
    const response = await chat('metrics-ok', apiKey, { stream: true });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/"code":"upstream_timeout"\}\}\n\ndata: \[DONE\]\n\n$/);
    const stalled = { model: 'metrics-ok', status: '2xx', error_type: 'timeout' };
    const samples = await relayRequestsOnceCounted([stalled]);
    expect(sampleValue(samples, { ...stalled, channel: String(channels.good) })).toBe(1);
    good.behaviour = {};
  });

  it('counts an upstream that never answers as a timeout', async () => {
    expect((await chat('metrics-silent')).status).toBe(504);
    const timedOut = { model: 'metrics-silent', status: '5xx', error_type: 'timeout' };
    const samples = await relayRequestsOnceCounted([timedOut]);
    expect(sampleValue(samples, { ...timedOut, channel: String(channels.silent) })).toBe(1);
  });

  it('counts playground requests, refused and answered', async () => {
    const before = await relayRequests();
    const body = { model: 'metrics-ok', messages: [{ role: 'user', content: 'hi' }] };
    const anonymous = await fetch(`${gateway.url}/pg/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(anonymous.status).toBe(401);
    expect((await root.post('/pg/chat/completions', body)).status).toBe(200);
    const answered = { ...SUCCEEDED, channel: String(channels.good) };
    const after = await eventually(
      relayRequests,
      (samples) =>
        sampleValue(samples, REFUSED) > sampleValue(before, REFUSED) &&
        sampleValue(samples, answered) > sampleValue(before, answered),
      3000,
    );
    expect(sampleValue(after, REFUSED) - sampleValue(before, REFUSED)).toBe(1);
    expect(sampleValue(after, answered) - sampleValue(before, answered)).toBe(1);
  });

  it('counts every channel test with its result', async () => {
    expect((await root.get(`/api/channel/test/${channels.good}`)).body.success).toBe(true);
    expect((await root.get(`/api/channel/test/${channels.failing}`)).body.success).toBe(false);
    const tests = parseSamples(await scrapeMetrics(gateway), 'tollgate_channel_tests_total');
    expect(sampleValue(tests, { channel: String(channels.good), result: 'ok' })).toBe(1);
    expect(sampleValue(tests, { channel: String(channels.failing), result: 'failed' })).toBe(1);
  });
});

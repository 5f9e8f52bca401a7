import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LedgerStats } from '../domain/ledger/ledger.ts';
import type { UsageStats } from '../domain/usage/index.ts';
import { counterSeries, histogramSeries, labelled } from '../metrics.ts';
import type { ChannelSnapshot, Usage, WireFormat } from './types.ts';

/**
 * Why a relay request did not succeed: the `error_type` label (OpenTelemetry's `error.type`), a fixed
 * set so that it stays a bounded label. `none` marks a success (OpenTelemetry leaves the attribute
 * out; a value lets every query match on it).
 */
export const RELAY_ERROR_TYPES = [
  'none',
  /** Refused by the key, token or user checks (401/403), or the playground's session. */
  'auth',
  /** The model request rate limit (429). */
  'rate_limit',
  /** Not enough quota on the wallet or the token. */
  'quota',
  /** The request itself is wrong (other 4xx: body, model name, size, content type). */
  'invalid_request',
  /** No enabled channel serves the model in the group, or the channel's configuration refused it. */
  'no_channel',
  /** The upstream failed on every attempt (its error, unreachable, a bad answer, a stream cut off). */
  'upstream',
  /** The wait for the upstream ran out (connect, headers or a stalled stream). */
  'timeout',
  /** The client went away before the answer was written (counted with status 499, class 4xx). */
  'client_closed',
  /** This pod is shutting down (503). */
  'unavailable',
  /** A fault of the gateway itself (500). */
  'internal',
] as const;
export type RelayErrorType = (typeof RELAY_ERROR_TYPES)[number];

/**
 * The relay's metrics (issue 5 item 10, issue 12 item 2), named after the OpenTelemetry gen_ai
 * conventions where one fits. Labels are bounded sets (model, channel, group, format, status class,
 * error type): never a user or a key.
 */
export interface RelayMetrics {
  /** One relay request ended, whatever the outcome: counted once (relay/outcome.ts). */
  finished(facts: {
    model: string;
    channel: string;
    group: string;
    format: WireFormat;
    status: number;
    errorType: RelayErrorType;
    durationMs: number;
  }): void;
  /** A successful answer was billed: its tokens, quota and time to first token. */
  billed(facts: { model: string; group: string; firstTokenMs: number | undefined; usage: Usage; quota: number }): void;
  upstreamError(channel: ChannelSnapshot, code: string): void;
  /** A request refused by a token, user or group rate limit (rate-limits.ts), before any reservation. */
  rateLimited(scope: 'token' | 'user' | 'group', kind: 'rpm' | 'tpm'): void;
  /** A stream was cut off because its holder's quota could not cover more of it (relay/overrun). */
  streamCut(facts: { model: string; group: string }): void;
  /** The gateway disabled a channel (or one of its keys) after an upstream failure. */
  autoDisabled(channel: ChannelSnapshot, scope: 'channel' | 'key'): void;
  /** A channel test ran (manual, test-all, periodic or recovery). */
  tested(channel: ChannelSnapshot, ok: boolean): void;
  inFlight: Gauge;
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: 'tollgate_relay_requests_total',
    help: 'Relay requests by model, channel, group, wire format, status class and error type, whatever their outcome.',
    labelNames: ['model', 'channel', 'group', 'format', 'status', 'error_type'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'gen_ai_server_request_duration_seconds',
    help: 'Time to answer a relay request, end to end, failures included (error_type).',
    labelNames: ['gen_ai_request_model', 'format', 'error_type'] as const,
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
    registers,
  });
  const ttft = new Histogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'Time from the request to the first streamed event (or the whole answer).',
    labelNames: ['gen_ai_request_model'] as const,
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24],
    registers,
  });
  const tokens = new Counter({
    name: 'gen_ai_client_token_usage_total',
    help: 'Tokens billed, by model and type (input, output, cached_input).',
    labelNames: ['gen_ai_request_model', 'gen_ai_token_type'] as const,
    registers,
  });
  const quota = new Counter({
    name: 'tollgate_quota_consumed_total',
    help: 'Quota charged (500,000 = 1 USD), by model and group.',
    labelNames: ['model', 'group'] as const,
    registers,
  });
  const upstreamErrors = new Counter({
    name: 'tollgate_upstream_errors_total',
    help: 'Failed upstream attempts by channel and error code.',
    labelNames: ['channel', 'code'] as const,
    registers,
  });
  const streamCuts = new Counter({
    name: 'tollgate_relay_stream_cuts_total',
    help: 'Streams cut off because the quota could not cover more of them, by model and group.',
    labelNames: ['model', 'group'] as const,
    registers,
  });
  const autoDisables = new Counter({
    name: 'tollgate_channel_auto_disabled_total',
    help: 'Channels (or keys of multi-key channels) the gateway disabled after upstream failures.',
    labelNames: ['channel', 'scope'] as const,
    registers,
  });
  const tests = new Counter({
    name: 'tollgate_channel_tests_total',
    help: 'Channel tests by channel and result.',
    labelNames: ['channel', 'result'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: 'tollgate_relay_rate_limited_total',
    help: 'Relay requests refused by a rate limit, by scope (token, user, group) and kind (rpm, tpm).',
    labelNames: ['scope', 'kind'] as const,
    registers,
  });
  const inFlight = new Gauge({
    name: 'tollgate_relay_in_flight_requests',
    help: 'Relay requests being served.',
    registers,
  });
  const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;
  // Label values are bounded sets, so each metric's children stay few; one is made per series, not per request.
  const requestSeries = counterSeries(requests, ['model', 'channel', 'group', 'format', 'status', 'error_type']);
  const durationSeries = histogramSeries(duration, ['gen_ai_request_model', 'format', 'error_type']);
  const ttftSeries = histogramSeries(ttft, ['gen_ai_request_model']);
  const tokenCounts = counterSeries(tokens, ['gen_ai_request_model', 'gen_ai_token_type']);
  const tokenSeries = labelled((model) => ({
    input: tokenCounts(model, 'input'),
    output: tokenCounts(model, 'output'),
    cached: tokenCounts(model, 'cached_input'),
  }));
  const quotaSeries = counterSeries(quota, ['model', 'group']);
  return {
    finished(f) {
      requestSeries(f.model, f.channel, f.group, f.format, statusClass(f.status), f.errorType).inc();
      durationSeries(f.model, f.format, f.errorType).observe(f.durationMs / 1000);
    },
    billed(f) {
      if (f.firstTokenMs !== undefined) ttftSeries(f.model).observe(f.firstTokenMs / 1000);
      const modelTokens = tokenSeries(f.model);
      modelTokens.input.inc(f.usage.promptTokens);
      modelTokens.output.inc(f.usage.completionTokens);
      if (f.usage.cachedTokens) modelTokens.cached.inc(f.usage.cachedTokens);
      quotaSeries(f.model, f.group).inc(f.quota);
    },
    upstreamError(channel, code) {
      upstreamErrors.inc({ channel: String(channel.id), code });
    },
    rateLimited(scope, kind) {
      rateLimited.inc({ scope, kind });
    },
    streamCut(f) {
      streamCuts.inc({ model: f.model, group: f.group });
    },
    autoDisabled(channel, scope) {
      autoDisables.inc({ channel: String(channel.id), scope });
    },
    tested(channel, ok) {
      tests.inc({ channel: String(channel.id), result: ok ? 'ok' : 'failed' });
    },
    inFlight,
  };
}

/**
 * Gauges read at scrape time from the quota ledger and the usage queue: how much quota this pod holds
 * in leases and reservations, and whether usage logs are keeping up with traffic.
 */
export function registerStateGauges(
  registry: Registry,
  sources: { ledger: () => LedgerStats; usage: () => UsageStats },
): void {
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge(
    'tollgate_ledger_leased_quota',
    'Quota this pod holds in leases and has not spent.',
    () => sources.ledger().leasedQuota,
  );
  gauge(
    'tollgate_ledger_reserved_quota',
    'Quota reserved by requests in flight on this pod.',
    () => sources.ledger().reservedQuota,
  );
  gauge('tollgate_ledger_leases', 'Accounts this pod holds a lease for.', () => sources.ledger().leases);
  gauge(
    'tollgate_ledger_unflushed_quota',
    'Spending not yet written to the lease rows.',
    () => sources.ledger().unflushedQuota,
  );
  gauge(
    'tollgate_ledger_debt_quota',
    'Quota spent that no lease covers yet (outage credit while the database is unreachable), written once it is back.',
    () => sources.ledger().debtQuota,
  );
  gauge('tollgate_usage_queued_logs', 'Usage log rows waiting to be written.', () => sources.usage().queuedLogs);
  gauge(
    'tollgate_usage_dropped_logs',
    'Uncharged usage log rows dropped because the queue was full (counters kept; charged rows are never dropped).',
    () => sources.usage().droppedLogs,
  );
  gauge(
    'tollgate_usage_failed_flushes',
    'Usage writes that failed (they are retried).',
    () => sources.usage().failedFlushes,
  );
}

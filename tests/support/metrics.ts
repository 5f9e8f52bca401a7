import type { Gateway } from '../../gateway/src/gateway.ts';

/** The gateway's Prometheus exposition, read where Prometheus scrapes it. The one place tests find /metrics. */
export async function scrapeMetrics(gateway: Pick<Gateway, 'metricsUrl'>): Promise<string> {
  const response = await fetch(`${gateway.metricsUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return response.text();
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped), optionally only those of one series name. */
export function parseSamples(text: string, name?: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match || (name !== undefined && match[1] !== name)) continue;
    const labels: Record<string, string> = {};
    for (const [, label, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[label!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * Waits until the gateway has written every settled request: no usage log queued and no spending unwritten,
 * seen twice 100 ms apart (a request settles just after its answer ends, so one empty reading is not enough).
 */
export async function usageSettled(gateway: Pick<Gateway, 'metricsUrl'>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error(`usage still unwritten after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const text = await scrapeMetrics(gateway);
    const pending = ['tollgate_usage_queued_logs', 'tollgate_ledger_unflushed_quota'].some((name) =>
      parseSamples(text, name).some((sample) => sample.value !== 0),
    );
    quiet = pending ? 0 : quiet + 1;
  }
}

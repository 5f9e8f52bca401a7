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

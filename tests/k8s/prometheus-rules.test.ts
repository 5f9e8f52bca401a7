/**
 * The alert rules evaluated by Prometheus's own tooling: `promtool check rules` parses every expression
 * as Prometheus will, and `promtool test rules` runs the unit tests in tests/k8s/prometheus/, which feed
 * the rules series and assert which alerts fire and which stay quiet.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { promtool, RULES_FILES, runPromtool } from '../support/promtool.ts';

const unitTests = readdirSync(path.join(import.meta.dirname, 'prometheus'))
  .filter((file) => file.endsWith('.test.yaml'))
  .sort();

describe.runIf(promtool)('the Prometheus rules under promtool', () => {
  it('parse as Prometheus rules', () => {
    expect(RULES_FILES.map((file) => path.basename(file))).toEqual([
      'tollgate-operator-rules.yaml',
      'tollgate-rules.yaml',
    ]);
    const { status, output } = runPromtool(['check', 'rules', ...RULES_FILES]);
    expect(output.match(/SUCCESS/g)).toHaveLength(RULES_FILES.length);
    expect(status, output).toBe(0);
  });

  it('have unit tests for the gateway and the operator alerts', () => {
    expect(unitTests).toEqual(['gateway-alerts.test.yaml', 'operator-alerts.test.yaml']);
  });

  it.each(unitTests)('pass %s', (file) => {
    const { status, output } = runPromtool(['test', 'rules', path.join('tests/k8s/prometheus', file)]);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });
});

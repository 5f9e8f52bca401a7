import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadClusterConfig, NoClusterError } from './cluster-config.ts';

describe('loadClusterConfig', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), 'tollgate-kubeconfig-'));
    vi.stubEnv('HOME', home);
    vi.stubEnv('KUBECONFIG', '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(home, { recursive: true, force: true });
  });

  it('refuses when nothing says where a cluster is', () => {
    expect(() => loadClusterConfig()).toThrow(NoClusterError);
    expect(() => loadClusterConfig()).toThrow(/no Kubernetes cluster configured/);
  });

  it('takes the cluster a kubeconfig names', () => {
    const file = path.join(home, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: dev, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]',
        'users: [{name: dev, user: {token: abc}}]',
        'contexts: [{name: dev, context: {cluster: dev, user: dev}}]',
        'current-context: dev',
      ].join('\n'),
    );
    vi.stubEnv('KUBECONFIG', file);
    expect(loadClusterConfig().getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });
});

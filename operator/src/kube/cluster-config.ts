import { KubeConfig } from '@kubernetes/client-node';

/** The client's last resort when it finds no configuration at all; it then retries for ever against nothing. */
const NO_CONFIGURATION = { name: 'cluster', server: 'http://localhost:8080' };

export class NoClusterError extends Error {
  override name = 'NoClusterError';
}

/**
 * KUBECONFIG, ~/.kube/config or the in-cluster service account, as `kubectl` looks for them. Finding none
 * is an error of its own, so a process started outside a cluster says so and stops instead of retrying.
 */
export function loadClusterConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster || (cluster.name === NO_CONFIGURATION.name && cluster.server === NO_CONFIGURATION.server)) {
    throw new NoClusterError(
      'no Kubernetes cluster configured: run in a pod with a service account, or set KUBECONFIG (or ~/.kube/config)',
    );
  }
  return kubeConfig;
}

// A leader-election candidate in a process of its own, so a test can SIGKILL it: a leader that
// dies without releasing its lease. Prints "leading" once it leads.
// Usage: node lease-candidate.ts <kubeconfig> <namespace> <lease> <identity> <leaseDurationSeconds>
import { createKubeClient, loadKubeConfig } from '../../../core/kubernetes/kube-client.ts';
import { LeaderElector } from '../../../operator/kube/leader-election.ts';

const [kubeconfigPath, namespace, name, identity, duration] = process.argv.slice(2);
if (!kubeconfigPath || !namespace || !name || !identity || !duration) {
  throw new Error('usage: lease-candidate.ts <kubeconfig> <namespace> <lease> <identity> <leaseDurationSeconds>');
}

const elector = new LeaderElector({
  client: createKubeClient(loadKubeConfig({ kubeconfigPath })),
  namespace,
  name,
  identity,
  leaseDurationSeconds: Number(duration),
  renewIntervalMs: 500,
  retryIntervalMs: 250,
  onStartedLeading: () => {
    process.stdout.write('leading\n');
  },
});
elector.start();

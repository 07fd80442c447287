// The Kubernetes client of a data-plane process (a gateway pod, a router worker): from
// --kubeconfig, then $KUBECONFIG, then the pod's service account.
import { createKubeClient, loadKubeConfig, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import { SettingsError } from '../config/settings.ts';

export function kubeClientFor(
  settings: { readonly kubeconfig?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): KubeClient {
  try {
    return createKubeClient(
      loadKubeConfig({
        kubeconfigPath: settings.kubeconfig,
        kubeconfigEnv: env.KUBECONFIG,
        serviceHost: env.KUBERNETES_SERVICE_HOST,
        servicePort: env.KUBERNETES_SERVICE_PORT,
      }),
    );
  } catch (error) {
    throw new SettingsError(`Kubernetes mode: ${(error as Error).message}`);
  }
}

// Kubernetes mode: the routing ConfigMap and the provider keys Secret, watched through the API
// (../kubernetes/routing-source.ts), make the snapshot served; the version served is reported to
// Redis for the operator. The admin API shows what is served, and writes its edits of routers,
// providers and users as ModelRouter, ModelProvider and GatewayUser resources (CrCatalog), which
// the operator publishes like any other: the resources stay the single source of truth.
import { SettingsError, type GatewaySettings } from '../config/settings.ts';
import { CrCatalog } from '../kubernetes/cr-catalog.ts';
import { kubeClientFor } from '../kubernetes/kube-client-for.ts';
import { RoutingSource } from '../kubernetes/routing-source.ts';
import { ServingReport, type ServingReports } from '../kubernetes/serving-report.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import type { SnapshotSource } from './snapshot-source.ts';

export function kubernetesSource(
  settings: GatewaySettings,
  reports: ServingReports,
  env: Readonly<Record<string, string | undefined>>,
): SnapshotSource {
  const namespace = settings.namespace;
  const pod = settings.podName;
  if (!namespace || !pod) throw new SettingsError('Kubernetes mode needs a namespace and a pod name');
  const client = kubeClientFor(settings, env);
  let served: Snapshot = { format: SNAPSHOT_FORMAT, version: '', routers: [], providers: [] };
  let loaded = false;
  let source: RoutingSource | undefined;
  let report: ServingReport | undefined;

  const catalog = new CrCatalog({ client, namespace: settings.resourceNamespace ?? namespace, served: () => served });

  return {
    initial: undefined,
    catalog,
    userResources: catalog,
    start({ routing, metrics, log }) {
      report = new ServingReport({ reports, pod, version: () => (loaded ? served.version : undefined), log });
      source = new RoutingSource({
        client,
        namespace,
        configMap: settings.routingConfigMap,
        secret: settings.providerKeysSecret,
        load(snapshot) {
          routing.load(snapshot);
          served = snapshot;
          loaded = true;
          report?.report();
        },
        waitFor: (reason) => routing.waitFor(reason),
        onRefused: () => metrics.snapshotsRefused.inc(),
        log,
      });
      source.start();
      report.start();
    },
    async reload() {
      // Nothing to re-read: the ConfigMap and the Secret are followed as they change.
    },
    async reseed() {
      // Nothing seeded: routers come from the ConfigMap, users from the operator.
    },
    async stop() {
      await source?.stop();
      await report?.stop();
    },
  };
}

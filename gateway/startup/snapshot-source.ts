// Where a gateway's routing snapshots come from: the configuration file and the catalog in the
// store (file mode), or the routing ConfigMap and the provider keys Secret (Kubernetes mode); and
// with them, where the admin API writes routers, providers, users and teams (the store, or
// resources). Everything else about a gateway is the same in both modes (see ../server.ts).
import type { RoutingCatalog } from '../catalog/catalog-service.ts';
import type { AccountDirectory } from '../accounts/account-directory.ts';
import type { Log } from '../../core/log.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import type { ServedRouting } from '../routing/served-routing.ts';

export interface SourceContext {
  readonly routing: ServedRouting;
  readonly metrics: GatewayMetrics;
  readonly log: Log;
}

export interface SnapshotSource {
  /** Served from start-up; undefined: the gateway is not ready until the source loads one. */
  readonly initial: Snapshot | undefined;
  /** What the admin API reads routers and providers from and edits them through. */
  readonly catalog: RoutingCatalog;
  /** What the admin API reads and edits users, teams and keys through: the store, or in Kubernetes mode resources. */
  readonly accounts: AccountDirectory;
  /** Starts feeding routing.load(); called once the app is built, before it listens. */
  start(context: SourceContext): void;
  /** SIGHUP. */
  reload(): Promise<void>;
  /** Puts back in the store what the source seeded at start-up, after the store lost its data. */
  reseed(): Promise<void>;
  /** Stops feeding; called once the app has drained, before the store closes. */
  stop(): Promise<void>;
}

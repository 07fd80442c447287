// What each gateway pod serves (Kubernetes mode): the routing snapshot version it has loaded,
// reported with a time to live and refreshed while the pod lives, so a pod that died without a
// word drops out by itself. The operator reads them all to decide a router's `Programmed`.

export interface ServingGateway {
  readonly pod: string;
  /** The routing snapshot version the pod serves. */
  readonly version: string;
  /** When the pod last said so (ISO 8601). */
  readonly at: string;
}

export interface GatewayReports {
  /** Says which snapshot version `pod` serves, for `ttlMs`; a newer report replaces the last. */
  report(pod: string, version: string, ttlMs: number, at?: Date): Promise<void>;
  /** Removes a pod's report, when it stops serving. */
  forget(pod: string): Promise<void>;
  /** Every report that has not expired, by pod name. */
  list(): Promise<ServingGateway[]>;
}

// Where a gateway pod in Kubernetes mode gets its routing table: the routing ConfigMap (the
// snapshot, no secrets) and the provider keys Secret (provider id -> key), each watched by name
// through the API (a mounted file would lag by up to a minute). Every change of either builds a
// whole new snapshot, keys merged, and hands it to `load`, which swaps the table atomically. A
// ConfigMap that does not decode is refused and the table served stays; so does a deleted one.
//
// RBAC: each informer asks for one object with the field selector metadata.name=<name>, which the
// API server also reads as the request's name, so a Role can allow get/list/watch on exactly
// these two objects by resourceNames (docs/kubernetes.md).
//
// A provider naming a Service (service_ref) is routed to its ready endpoints: the Services the
// snapshot names are followed (service-endpoints.ts), and a change of their endpoints rebuilds
// the table at once, the snapshot itself unchanged.
import type { Snapshot } from '../../core/resources/snapshot.ts';
import { Informer, type InformerEvent, type InformerOptions } from '../../core/kubernetes/informer.ts';
import type { KubeClient, KubeObject, KubeRequest } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import { decodeSnapshot, type DecodeResult } from '../../core/kubernetes/snapshot-configmap.ts';
import { servicesNamed, withReplicas } from './service-replicas.ts';
import { ServiceEndpoints } from './service-endpoints.ts';

export type ConfigMap = KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };
export type Secret = KubeObject & { data?: Record<string, string> };

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps' };
const SECRETS = { group: '', version: 'v1', plural: 'secrets' };

/** Reads the snapshot of a routing ConfigMap, refusing one that carries a provider key. */
export function readRoutingConfigMap(configMap: ConfigMap): DecodeResult {
  const decoded = decodeSnapshot({ annotations: configMap.metadata?.annotations, data: configMap.data, binaryData: configMap.binaryData });
  if (!decoded.ok) return decoded;
  const keyed = decoded.snapshot.providers.find((provider) => provider.key !== undefined);
  if (keyed)
    return { ok: false, reason: `provider ${keyed.id} carries a key: keys belong in the provider keys Secret, never in the ConfigMap` };
  return decoded;
}

/** The keys of the provider keys Secret, by provider id (its data is base64; surrounding whitespace, such as a file's last newline, is dropped). */
export function providerKeys(secret: Secret): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [id, encoded] of Object.entries(secret.data ?? {})) {
    const key = Buffer.from(encoded, 'base64').toString('utf8').trim();
    if (key) keys.set(id, key);
  }
  return keys;
}

/** The snapshot with each provider's key from `keys`; a provider without one has none. */
export function withKeys(snapshot: Snapshot, keys: ReadonlyMap<string, string>): Snapshot {
  return {
    ...snapshot,
    providers: snapshot.providers.map((provider) => {
      const { key: _ignored, ...rest } = provider;
      const key = keys.get(provider.id);
      return key === undefined ? rest : { ...rest, key };
    }) as Snapshot['providers'],
  };
}

export interface RoutingSourceOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly configMap: string;
  readonly secret: string;
  /**
   * Serves a new snapshot (keys merged); called once per change that makes a different table.
   * `routed` is the snapshot as routing serves it: each provider naming a Service given `urls`,
   * its ready endpoints now.
   */
  readonly load: (snapshot: Snapshot, routed: Snapshot) => void;
  /** Says why nothing is served yet (readiness); only called before the first load. */
  readonly waitFor: (reason: string) => void;
  /** Told of each refused ConfigMap (a metric). */
  readonly onRefused?: (reason: string) => void;
  readonly log: Log;
  /** Informer tuning, for tests; the informer's defaults otherwise. */
  readonly informer?: Pick<InformerOptions<KubeObject>, 'resyncIntervalMs' | 'watchTimeoutSeconds' | 'silentWatchTimeoutMs'>;
}

export class RoutingSource {
  readonly #options: RoutingSourceOptions;
  readonly #configMaps: Informer<ConfigMap>;
  readonly #secrets: Informer<Secret>;
  readonly #endpoints: ServiceEndpoints;
  /** The last snapshot that decoded, without keys, and the ConfigMap version it came from. */
  #snapshot: { snapshot: Snapshot; resourceVersion: string } | undefined;
  /** The keys, once the Secret has been seen. */
  #keys: { keys: Map<string, string>; resourceVersion: string } | undefined;
  /** The last ConfigMap refused, while no later one decoded. */
  #refused: { resourceVersion: string; reason: string } | undefined;
  /** What was last loaded, so a resync that changed nothing rebuilds nothing. */
  #loaded = '';
  #loadedOnce = false;
  /** Both first lists are in: an object not seen by now does not exist. */
  #synced = false;

  constructor(options: RoutingSourceOptions) {
    this.#options = options;
    this.#configMaps = new Informer<ConfigMap>({
      ...options.informer,
      client: this.#explaining(options.client, `ConfigMap ${this.#configMapName}`),
      resource: CONFIGMAPS,
      namespace: options.namespace,
      fieldSelector: `metadata.name=${options.configMap}`,
      handler: async (event) => this.#onConfigMap(event),
      log: options.log,
    });
    this.#secrets = new Informer<Secret>({
      ...options.informer,
      client: this.#explaining(options.client, `Secret ${this.#secretName}`),
      resource: SECRETS,
      namespace: options.namespace,
      fieldSelector: `metadata.name=${options.secret}`,
      handler: async (event) => this.#onSecret(event),
      log: options.log,
    });
    this.#endpoints = new ServiceEndpoints({
      client: this.#explaining(options.client, 'EndpointSlices'),
      namespace: options.namespace,
      onChange: () => this.#rebuild(),
      log: options.log,
      ...(options.informer ? { informer: options.informer } : {}),
    });
  }

  get #configMapName(): string {
    return `${this.#options.namespace}/${this.#options.configMap}`;
  }

  get #secretName(): string {
    return `${this.#options.namespace}/${this.#options.secret}`;
  }

  start(): void {
    this.#waitFor(`reading ConfigMap ${this.#configMapName} and Secret ${this.#secretName}`);
    this.#configMaps.start();
    this.#secrets.start();
    Promise.all([this.#configMaps.synced, this.#secrets.synced]).then(
      () => {
        this.#synced = true;
        this.#rebuild();
      },
      () => {},
    );
  }

  async stop(): Promise<void> {
    await Promise.all([this.#configMaps.stop(), this.#secrets.stop(), this.#endpoints.stop()]);
  }

  #onConfigMap(event: InformerEvent<ConfigMap>): void {
    const resourceVersion = event.object.metadata?.resourceVersion ?? '';
    if (event.type === 'delete') {
      this.#options.log.warn({ configMap: this.#configMapName }, 'routing ConfigMap deleted; the table served stays');
      return;
    }
    // A resync hands the same object again: decoded (or refused) once is enough.
    if (resourceVersion === this.#snapshot?.resourceVersion || resourceVersion === this.#refused?.resourceVersion) return;
    const decoded = readRoutingConfigMap(event.object);
    if (!decoded.ok) {
      this.#refused = { resourceVersion, reason: decoded.reason };
      this.#options.onRefused?.(decoded.reason);
      this.#options.log.error(
        { configMap: this.#configMapName, resourceVersion, reason: decoded.reason, serving: this.#snapshot?.snapshot.version },
        `routing ConfigMap refused, the table served stays: ${decoded.reason}`,
      );
      this.#rebuild();
      return;
    }
    this.#refused = undefined;
    this.#snapshot = { snapshot: decoded.snapshot, resourceVersion };
    this.#rebuild();
  }

  #onSecret(event: InformerEvent<Secret>): void {
    if (event.type === 'delete') {
      this.#options.log.warn({ secret: this.#secretName }, 'provider keys Secret deleted; the keys in use stay');
      return;
    }
    this.#keys = { keys: providerKeys(event.object), resourceVersion: event.object.metadata?.resourceVersion ?? '' };
    this.#rebuild();
  }

  #rebuild(): void {
    if (!this.#snapshot || !this.#keys) {
      const missing: string[] = [];
      if (this.#refused) missing.push(`ConfigMap ${this.#configMapName} refused: ${this.#refused.reason}`);
      else if (!this.#snapshot && this.#synced) missing.push(`ConfigMap ${this.#configMapName} not found`);
      if (!this.#keys && this.#synced) missing.push(`Secret ${this.#secretName} (provider keys) not found`);
      if (missing.length > 0) this.#waitFor(missing.join('; '));
      return;
    }
    const { snapshot, resourceVersion } = this.#snapshot;
    this.#endpoints.follow(servicesNamed(snapshot, this.#options.namespace));
    // A first table waits for the Services' endpoints, so that a new pod is not ready with replicas missing.
    const unlisted = this.#loadedOnce ? [] : this.#endpoints.unlisted();
    if (unlisted.length > 0) {
      this.#waitFor(`listing the EndpointSlices of Service ${unlisted.join(', ')}`);
      return;
    }
    const served = withKeys(snapshot, this.#keys.keys);
    const routed = withReplicas(served, (ref) => this.#endpoints.urls(ref));
    // The Services' ready endpoints are part of what is served: a change of them alone rebuilds.
    const replicas = routed.providers.flatMap((p) => ('service_ref' in p && p.service_ref ? [[p.id, p.urls]] : []));
    const loading = `${resourceVersion}|${this.#keys.resourceVersion}|${JSON.stringify(replicas)}`;
    if (loading === this.#loaded) return;
    this.#loaded = loading;
    this.#options.load(served, routed);
    this.#loadedOnce = true;
    this.#options.log.info(
      {
        snapshot: snapshot.version,
        routers: snapshot.routers.length,
        providers: snapshot.providers.length,
        keyed: served.providers.filter((p) => p.key !== undefined).length,
      },
      'routing snapshot loaded',
    );
  }

  #waitFor(reason: string): void {
    if (!this.#loadedOnce) this.#options.waitFor(reason);
  }

  /** The client, telling readiness why a list or watch failed (403 from missing RBAC, say). */
  #explaining(client: KubeClient, what: string): KubeClient {
    const explain = (error: unknown) => {
      if (!(error instanceof Error) || error.name === 'AbortError' || error.name === 'TimeoutError') return;
      this.#waitFor(`cannot read ${what}: ${error.message}`);
    };
    return {
      request<T>(request: KubeRequest): Promise<T> {
        return client.request<T>(request).catch((error: unknown) => {
          explain(error);
          throw error;
        });
      },
      stream(request: KubeRequest): Promise<AsyncIterable<string>> {
        return client.stream(request).catch((error: unknown) => {
          explain(error);
          throw error;
        });
      },
    };
  }
}

// Follows the EndpointSlices of the Services that providers name (service_ref): one informer per
// Service (namespace and label kubernetes.io/service-name=<name>), started when a snapshot first
// names it and stopped when none does any more. Each change of a followed Service's slices is
// told to `onChange` at once, so the routing table is rebuilt with the ready addresses now.
//
// RBAC: get/list/watch on endpointslices (discovery.k8s.io) in the namespaces of the Services.
import { setTimeout as sleep } from 'node:timers/promises';
import { Informer, type InformerOptions } from '../../core/kubernetes/informer.ts';
import { objectKey, type KubeClient, type KubeObject } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import type { ServiceRef } from '../../core/resources/service-ref.ts';
import {
  endpointSliceVersion,
  endpointSlices,
  replicaUrlsFromSlices,
  SERVICE_NAME_LABEL,
  serviceId,
  serviceKeyOf,
  type EndpointSlice,
  type ServiceKey,
  type SliceVersion,
} from '../../core/kubernetes/endpoint-slices.ts';

export interface ServiceEndpointsOptions {
  readonly client: KubeClient;
  /** Where a reference without a namespace looks (the gateway's own). */
  readonly namespace: string;
  /** Told of every change of a followed Service's slices, and of each first list. */
  readonly onChange: () => void;
  readonly log: Log;
  /** Informer tuning, for tests; the informer's defaults otherwise. */
  readonly informer?: Pick<InformerOptions<KubeObject>, 'resyncIntervalMs' | 'watchTimeoutSeconds' | 'silentWatchTimeoutMs'>;
}

/** One followed Service: its informer (once the API version is known) and the slices it has told of, by namespace/name. */
interface Followed {
  informer: Informer<EndpointSlice> | undefined;
  /** Its first list is in: no slice seen by now exists. */
  listed: boolean;
  readonly slices: Map<string, EndpointSlice>;
}

export class ServiceEndpoints {
  readonly #options: ServiceEndpointsOptions;
  readonly #followed = new Map<string, Followed>();
  #version: Promise<SliceVersion> | undefined;
  readonly #stopping = new AbortController();

  constructor(options: ServiceEndpointsOptions) {
    this.#options = options;
  }

  /** Follows exactly `services`: informers start for new ones and stop for those no longer named. */
  follow(services: readonly ServiceKey[]): void {
    const wanted = new Map(services.map((key) => [serviceId(key), key]));
    for (const [id, followed] of this.#followed) {
      if (wanted.has(id)) continue;
      this.#followed.delete(id);
      void followed.informer?.stop();
      this.#options.log.info({ service: id }, 'no provider names this Service any more: its EndpointSlices are no longer followed');
    }
    for (const [id, key] of wanted) if (!this.#followed.has(id)) this.#start(id, key);
  }

  /** The replica URLs of `ref` now: its Service's ready addresses (none before its slices are listed). */
  urls(ref: ServiceRef): string[] {
    const followed = this.#followed.get(serviceId(serviceKeyOf(ref, this.#options.namespace)));
    return followed ? replicaUrlsFromSlices(ref, [...followed.slices.values()]) : [];
  }

  /** The Services followed whose slices have not been listed yet (namespace/name). */
  unlisted(): string[] {
    return [...this.#followed].filter(([, followed]) => !followed.listed).map(([id]) => id);
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    const followed = [...this.#followed.values()];
    this.#followed.clear();
    await Promise.all(followed.map(({ informer }) => informer?.stop()));
  }

  #start(id: string, key: ServiceKey): void {
    const followed: Followed = { informer: undefined, listed: false, slices: new Map() };
    this.#followed.set(id, followed);
    this.#options.log.info({ service: id }, "following the Service's EndpointSlices");
    this.#sliceVersion().then(
      (version) => {
        // No longer named while the version was asked: nothing to start.
        if (this.#followed.get(id) !== followed) return;
        followed.informer = this.#informer(version, id, key, followed);
        followed.informer.start();
        followed.informer.synced.then(
          () => {
            followed.listed = true;
            if (this.#followed.get(id) === followed) this.#options.onChange();
          },
          () => {},
        );
      },
      () => {},
    );
  }

  #informer(version: SliceVersion, id: string, key: ServiceKey, followed: Followed): Informer<EndpointSlice> {
    return new Informer<EndpointSlice>({
      ...this.#options.informer,
      client: this.#options.client,
      resource: endpointSlices(version),
      namespace: key.namespace,
      labelSelector: `${SERVICE_NAME_LABEL}=${key.name}`,
      handler: async (event) => {
        if (event.type === 'delete') followed.slices.delete(objectKey(event.object));
        else followed.slices.set(objectKey(event.object), event.object);
        // A stopped informer's late events change nothing served.
        if (this.#followed.get(id) === followed) this.#options.onChange();
      },
      log: this.#options.log,
    });
  }

  /** Asked once; asked again after a failure (the API server not answering yet), 1 s later at the soonest. */
  #sliceVersion(): Promise<SliceVersion> {
    this.#version ??= this.#askVersion();
    return this.#version;
  }

  async #askVersion(): Promise<SliceVersion> {
    const signal = this.#stopping.signal;
    for (;;) {
      try {
        return await endpointSliceVersion(this.#options.client, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        this.#options.log.warn({ err: error }, 'cannot tell which EndpointSlice API the server serves; asking again');
        await sleep(1000, undefined, { signal });
      }
    }
  }
}

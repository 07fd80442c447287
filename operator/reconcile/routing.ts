// The "routing" key's reconcile: the whole routing state rebuilt from the informers' caches,
// then, each only when it changed, the provider keys Secret, the routing ConfigMap, and the
// status of every router and provider.
import { applyObject, isStatus, resourcePath, type KubeClient, type ResourceType } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import type { ModelProviderStatus, ModelRouterStatus } from '../../core/resources/kubernetes/crd-schemas.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import type { RoutingMode } from '../../core/resources/kinds.ts';
import type { EventRecorder } from '../kube/events.ts';
import {
  CONFIGMAPS,
  MODEL_PROVIDERS,
  MODEL_ROUTERS,
  SECRETS,
  type Cache,
  type ConfigMapObject,
  type CustomObject,
  type SecretObject,
} from '../kube/resources.ts';
import { computeRouting, keyOf, type Secrets } from './desired-routing.ts';
import { programmedCondition, providerStatus, routerStatus, type GatewayReport } from './routing-status.ts';
import { configMapUpToDate, keysSecretUpToDate, providerKeysSecret, routingConfigMap, type RoutingTarget } from './routing-writes.ts';
import { writeStatus } from './write-status.ts';
import { withHealth } from './provider-health-status.ts';
import { readyReplicas } from './provider-replicas.ts';
import type { EndpointSlice } from '../../core/kubernetes/endpoint-slices.ts';
import type { ProviderCondition, ProviderRef } from '../../core/store/provider-health.ts';

export const ROUTING_KEY = 'routing';

export type RouterObject = CustomObject<ModelRouterStatus>;
export type ProviderObject = CustomObject<ModelProviderStatus>;

export interface RoutingDeps {
  readonly client: KubeClient;
  readonly routers: Cache<RouterObject>;
  readonly providers: Cache<ProviderObject>;
  readonly secrets: Cache<SecretObject>;
  /** The gateways' reports of the snapshot they serve (Redis). */
  readonly gateways: { list(): Promise<readonly GatewayReport[]> };
  readonly events: EventRecorder;
  readonly target: RoutingTarget;
  readonly log: Log;
  readonly now?: () => Date;
  /** Told of each write of the routing ConfigMap (a metric). */
  readonly snapshotWritten?: () => void;
  /** The routing mode of routers that set none: the gateways' --routing-mode. */
  readonly routingMode: RoutingMode;
  /** Queue mode: how many requests of a router wait, fleet-wide (Redis). */
  readonly queueDepth?: (router: string) => Promise<number>;
  /** The EndpointSlices of Services (ready replicas in a ModelProvider's status); absent: not counted for providers naming one. */
  readonly endpointSlices?: Cache<EndpointSlice>;
  /** What the gateways found of the providers' health (Redis). */
  readonly providerHealth?: (providers: readonly ProviderRef[]) => Promise<Map<string, ProviderCondition>>;
}

export async function reconcileRouting(deps: RoutingDeps, signal?: AbortSignal): Promise<void> {
  const routers = deps.routers.list();
  const providers = deps.providers.list();
  const computed = computeRouting(routers, providers, referencedSecrets(providers, deps.secrets));
  const outcome = {
    ...computed,
    ...withHealth(
      computed,
      await readHealth(
        deps,
        computed.snapshot.providers.map((p) => ({ router: p.router, id: p.id })),
      ),
      Date.now(),
    ),
  };
  // Keys before the snapshot: a gateway that sees a new provider finds its key already there.
  // (A provider removed goes the other way for a moment: served without its key, then gone.)
  await writeKeys(deps, outcome.keys, signal);
  await writeSnapshot(deps, outcome.snapshot, signal);

  const programmed = programmedCondition(await readReports(deps), outcome.snapshot.version);
  const now = deps.now?.() ?? new Date();
  const failures: unknown[] = [];
  const attempt = (write: Promise<unknown>) => write.catch((error: unknown) => void failures.push(error));
  const modes = new Map(outcome.snapshot.routers.map((spec) => [spec.name, spec.routing_mode ?? deps.routingMode]));
  for (const router of routers) {
    const result = outcome.routers.get(keyOf(router.metadata));
    if (!result) continue;
    const mode = result.publicName === undefined ? undefined : modes.get(result.publicName);
    const queue =
      mode === undefined ? undefined : { mode, depth: mode === 'queue' ? await readDepth(deps, result.publicName!) : undefined };
    await attempt(writeStatus(deps, MODEL_ROUTERS, router, routerStatus(router, result, programmed, now, queue), signal));
  }
  const served = new Map(outcome.snapshot.providers.map((spec) => [spec.id, spec]));
  for (const provider of providers) {
    const result = outcome.providers.get(keyOf(provider.metadata));
    if (!result) continue;
    const spec = result.served && served.get(result.served.id);
    const replicas = spec && readyReplicas(spec, provider.metadata.namespace, deps.endpointSlices);
    await attempt(writeStatus(deps, MODEL_PROVIDERS, provider, providerStatus(provider, result.conditions, now, replicas), signal));
  }
  // One status that failed does not stop the others; the key is retried for it.
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} status writes failed`);
}

/** Decoded data of the Secrets the providers name, by namespace/name; no other Secret is decoded. */
function referencedSecrets(providers: readonly ProviderObject[], secrets: Cache<SecretObject>): Secrets {
  const found = new Map<string, Record<string, string>>();
  for (const provider of providers) {
    const name = (provider.spec as { apiKeySecretRef?: { name?: unknown } } | undefined)?.apiKeySecretRef?.name;
    if (typeof name !== 'string') continue;
    const key = `${provider.metadata.namespace}/${name}`;
    const secret = secrets.get(key);
    if (secret) found.set(key, decode(secret.data ?? {}));
  }
  return found;
}

function decode(data: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([field, value]) => [field, Buffer.from(value, 'base64').toString('utf8')]));
}

async function writeKeys(deps: RoutingDeps, keys: Record<string, string>, signal?: AbortSignal): Promise<void> {
  const current = await read<SecretObject>(deps.client, SECRETS, deps.target.namespace, deps.target.secret, signal);
  if (keysSecretUpToDate(current, keys)) return;
  // force: the operator alone writes this Secret.
  await applyObject(deps.client, SECRETS, providerKeysSecret(deps.target, keys), { force: true, signal });
  deps.log.info({ secret: deps.target.secret, providers: Object.keys(keys).length }, 'provider keys written');
}

async function writeSnapshot(deps: RoutingDeps, snapshot: Snapshot, signal?: AbortSignal): Promise<void> {
  const current = await read<ConfigMapObject>(deps.client, CONFIGMAPS, deps.target.namespace, deps.target.configMap, signal);
  const desired = routingConfigMap(deps.target, snapshot);
  if (configMapUpToDate(current, desired)) return;
  await applyObject(deps.client, CONFIGMAPS, desired, { force: true, signal });
  deps.snapshotWritten?.();
  deps.log.info(
    { configMap: deps.target.configMap, version: snapshot.version, routers: snapshot.routers.length, providers: snapshot.providers.length },
    'routing snapshot written',
  );
}

async function read<T>(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.request<T>({ path: resourcePath(type, { namespace, name }), signal });
  } catch (error) {
    if (isStatus(error, 404)) return undefined;
    throw error;
  }
}

/** The providers' health; none known when Redis cannot tell (the status then says what the resources alone say). */
async function readHealth(deps: RoutingDeps, providers: readonly ProviderRef[]): Promise<Map<string, ProviderCondition>> {
  if (!deps.providerHealth || providers.length === 0) return new Map();
  try {
    return await deps.providerHealth(providers);
  } catch (error) {
    deps.log.warn({ err: error }, "cannot read the providers' health");
    return new Map();
  }
}

/** The router's queue depth; undefined when Redis cannot tell (the status then leaves it out). */
async function readDepth(deps: RoutingDeps, router: string): Promise<number | undefined> {
  try {
    return await deps.queueDepth?.(router);
  } catch (error) {
    deps.log.warn({ err: error, router }, "cannot read the router's queue depth");
    return undefined;
  }
}

/** undefined when Redis cannot be read: Programmed becomes Unknown, the rest goes on. */
async function readReports(deps: RoutingDeps): Promise<readonly GatewayReport[] | undefined> {
  try {
    return await deps.gateways.list();
  } catch (error) {
    deps.log.warn({ err: error }, "cannot read the gateways' reports");
    return undefined;
  }
}

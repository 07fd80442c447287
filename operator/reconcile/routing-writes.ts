// What the routing reconcile writes besides status: the routing ConfigMap (the snapshot, no
// keys) and the provider keys Secret, as server-side apply objects, and whether the copies on
// the server already hold exactly that (then nothing is written: each write wakes every gateway).
import { ANNOTATIONS, encodeSnapshot, SNAPSHOT_GZIP_KEY, SNAPSHOT_KEY } from '../../core/kubernetes/snapshot-configmap.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import { MANAGED_BY, type ConfigMapObject, type SecretObject } from '../kube/resources.ts';

export interface RoutingTarget {
  readonly namespace: string;
  readonly configMap: string;
  readonly secret: string;
}

export type RoutingConfigMap = {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
};

export function routingConfigMap(target: RoutingTarget, snapshot: Snapshot): RoutingConfigMap {
  const { annotations, data, binaryData } = encodeSnapshot(snapshot);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: target.configMap, namespace: target.namespace, labels: { ...MANAGED_BY }, annotations },
    ...(data ? { data } : {}),
    ...(binaryData ? { binaryData } : {}),
  };
}

export type ProviderKeysSecret = {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type: 'Opaque';
  data: Record<string, string>;
};

export function providerKeysSecret(target: RoutingTarget, keys: Readonly<Record<string, string>>): ProviderKeysSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: target.secret, namespace: target.namespace, labels: { ...MANAGED_BY } },
    type: 'Opaque',
    data: base64Values(keys),
  };
}

/** True when the ConfigMap on the server carries this snapshot, its annotations and labels. */
export function configMapUpToDate(current: ConfigMapObject | undefined, desired: RoutingConfigMap): boolean {
  if (!current) return false;
  return (
    includes(current.metadata.labels, desired.metadata.labels) &&
    includes(current.metadata.annotations, desired.metadata.annotations) &&
    current.metadata.annotations?.[ANNOTATIONS.sha256] !== undefined &&
    current.data?.[SNAPSHOT_KEY] === desired.data?.[SNAPSHOT_KEY] &&
    current.binaryData?.[SNAPSHOT_GZIP_KEY] === desired.binaryData?.[SNAPSHOT_GZIP_KEY]
  );
}

/** True when the Secret on the server holds exactly these keys (a key too many is a provider gone). */
export function keysSecretUpToDate(current: SecretObject | undefined, keys: Readonly<Record<string, string>>): boolean {
  if (!current || !includes(current.metadata.labels, MANAGED_BY)) return false;
  const held = Object.entries(current.data ?? {});
  const wanted = base64Values(keys);
  return held.length === Object.keys(wanted).length && held.every(([id, value]) => wanted[id] === value);
}

/** The API server stores and returns Secret data as canonical base64, which Buffer writes too. */
function base64Values(keys: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, Buffer.from(key, 'utf8').toString('base64')]));
}

function includes(actual: Readonly<Record<string, string>> | undefined, wanted: Readonly<Record<string, string>>): boolean {
  return Object.entries(wanted).every(([key, value]) => actual?.[key] === value);
}

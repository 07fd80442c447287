// The resource types the operator reads and writes, and the shapes it reads them in (raw JSON
// from the API server: what the informers cache).
import type { KubeObject, ObjectMeta, ResourceType } from '../../core/kubernetes/kube-client.ts';
import { GROUP, VERSION } from '../../core/resources/kubernetes/crd-schemas.ts';

export const MODEL_ROUTERS: ResourceType = { group: GROUP, version: VERSION, plural: 'modelrouters' };
export const MODEL_PROVIDERS: ResourceType = { group: GROUP, version: VERSION, plural: 'modelproviders' };
export const GATEWAY_USERS: ResourceType = { group: GROUP, version: VERSION, plural: 'gatewayusers' };
export const GATEWAY_TEAMS: ResourceType = { group: GROUP, version: VERSION, plural: 'gatewayteams' };
export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets' };
export const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps' };
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events' };

/** Labels on every object the operator creates. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'tollgate-operator' } as const;

/** A namespaced object as listed or watched: name and namespace are always there. */
export interface NamespacedObject extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string };
}

/** A ModelRouter, ModelProvider or GatewayUser; the spec is checked by translation, not here. */
export interface CustomObject<Status> extends NamespacedObject {
  spec?: unknown;
  status?: Status;
}

export interface SecretObject extends NamespacedObject {
  type?: string;
  /** Values in base64. */
  data?: Record<string, string>;
}

export interface ConfigMapObject extends NamespacedObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** What the reconcilers read of an informer: its cache. */
export interface Cache<T> {
  list(): T[];
  /** By namespace/name. */
  get(key: string): T | undefined;
}

// The admin API in Kubernetes mode: routers and providers are written as ModelRouter and
// ModelProvider resources (server-side apply, field manager `tollgate-gateway`), so the resources
// stay the single source of truth (users and teams likewise: cr-accounts.ts). The operator turns
// them into the routing ConfigMap, as it does for resources applied with kubectl.
//
// Reads come from the snapshot being served. An edit is computed on it by the same route code as
// in file mode (same schemas, same conflict checks), then the difference between the served
// snapshot and the edited one is written: changed routers and providers are applied, removed ones
// deleted. A provider's key goes into a Secret `<provider object>-api-key` owned by the
// ModelProvider (so it is garbage-collected with it), named by spec.apiKeySecretRef.
import { isDeepStrictEqual } from 'node:util';
import type { CatalogContent, RoutingCatalog } from '../catalog/catalog-service.ts';
import { findConflicts } from '../../core/resources/consistency.ts';
import { API_VERSION } from '../../core/resources/kubernetes/crd-schemas.ts';
import {
  PROVIDER_KEY_FIELD,
  providerId,
  providerKeySecretName,
  providerObjectName,
  providerToCR,
  routerObjectName,
  routerToCR,
} from '../../core/resources/kubernetes/translate.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import { applyObject, GATEWAY_FIELD_MANAGER, type KubeObject, type ResourceType } from '../../core/kubernetes/kube-client.ts';
import { kubeErrors, type NamespaceResources } from './namespace-resources.ts';
import { InvalidResourceError } from './write-errors.ts';

export const MODEL_ROUTERS: ResourceType = { group: 'tollgate.dev', version: 'v1alpha1', plural: 'modelrouters' };
export const MODEL_PROVIDERS: ResourceType = { group: 'tollgate.dev', version: 'v1alpha1', plural: 'modelproviders' };
const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets' };

interface CR extends KubeObject {
  metadata: { name: string; namespace?: string; uid?: string };
  spec?: { name?: string; routerRef?: { name?: string }; apiKeySecretRef?: { name: string; key: string } };
}

export interface CrCatalogOptions {
  /** Where the resources are written (and looked up). */
  readonly resources: NamespaceResources;
  /** The snapshot being served. */
  readonly served: () => Snapshot;
}

export class CrCatalog implements RoutingCatalog {
  readonly #resources: NamespaceResources;
  readonly #namespace: string;
  readonly #served: () => Snapshot;

  constructor(options: CrCatalogOptions) {
    this.#resources = options.resources;
    this.#namespace = options.resources.namespace;
    this.#served = options.served;
  }

  async current(): Promise<Snapshot> {
    return this.#served();
  }

  /** A ModelProvider is served as `<namespace>-<name>`: the id a provider asked for as `requested` gets. */
  providerId(requested: string): string {
    return providerId(this.#namespace, providerObjectName(this.#namespace, requested));
  }

  /**
   * Writes what `edit` changed in the served snapshot. Resolves to undefined: the operator
   * publishes the result, so there is no snapshot of this gateway's own to wait for.
   */
  async change(edit: (current: CatalogContent) => CatalogContent): Promise<undefined> {
    const served = this.#served();
    const next = edit({ routers: [...served.routers], providers: [...served.providers] });
    const conflicts = findConflicts(next.routers, next.providers);
    if (conflicts.length > 0) throw new ConflictError(conflicts.map((c) => c.message).join('; '));
    await kubeErrors(() => this.#write(served, next));
    return undefined;
  }

  async #write(served: CatalogContent, next: CatalogContent): Promise<void> {
    const routerObjects = await this.#resources.list<CR>(MODEL_ROUTERS);
    const providerObjects = await this.#resources.list<CR>(MODEL_PROVIDERS);
    const routerObject = (name: string) => routerObjects.find((cr) => (cr.spec?.name ?? cr.metadata.name) === name);
    const providerObject = (id: string) => providerObjects.find((cr) => providerId(this.#namespace, cr.metadata.name) === id);
    const notHere = (what: string) =>
      new ConflictError(`${what} is not a resource in namespace "${this.#namespace}", where the admin API writes: change it with kubectl`);

    const servedRouters = new Map(served.routers.map((r) => [r.name, r]));
    const servedProviders = new Map(served.providers.map((p) => [p.id, p]));
    const nextRouters = new Set(next.routers.map((r) => r.name));
    const nextProviders = new Set(next.providers.map((p) => p.id));

    // What is deleted, found before anything is written.
    const providersGone = [...servedProviders.keys()]
      .filter((id) => !nextProviders.has(id))
      .map((id) => {
        const existing = providerObject(id);
        if (!existing) throw notHere(`Provider "${id}"`);
        return existing.metadata.name;
      });
    const routersGone = [...servedRouters.keys()]
      .filter((name) => !nextRouters.has(name))
      .map((name) => {
        const existing = routerObject(name);
        if (!existing) throw notHere(`Router "${name}"`);
        return existing.metadata.name;
      });

    // Where each router of the result lives (existing object, or the name a new one gets).
    const routerNames = new Map<string, string>();
    for (const router of next.routers) {
      const existing = routerObject(router.name);
      if (servedRouters.has(router.name)) {
        if (existing) routerNames.set(router.name, existing.metadata.name);
        else if (!isDeepStrictEqual(servedRouters.get(router.name), router)) throw notHere(`Router "${router.name}"`);
        continue; // unchanged, and not a resource of this namespace: nothing to write
      }
      const name = routerObjectName(router.name);
      if (existing || routerObjects.some((cr) => cr.metadata.name === name)) {
        throw new ConflictError(`A ModelRouter for "${router.name}" already exists in namespace "${this.#namespace}" (not served yet)`);
      }
      routerNames.set(router.name, name);
    }

    for (const router of next.routers) {
      const name = routerNames.get(router.name);
      if (name === undefined || isDeepStrictEqual(servedRouters.get(router.name), router)) continue;
      await this.#resources.apply(MODEL_ROUTERS, 'ModelRouter', name, routerToCR(router, name));
    }

    for (const provider of next.providers) {
      const before = servedProviders.get(provider.id);
      if (before && isDeepStrictEqual(before, provider)) continue;
      const existing = providerObject(provider.id);
      if (before && !existing) throw notHere(`Provider "${provider.id}"`);
      if (!before && existing)
        throw new ConflictError(`A provider with id "${provider.id}" already exists in namespace "${this.#namespace}" (not served yet)`);
      const routerName = routerNames.get(provider.router) ?? routerObject(provider.router)?.metadata.name;
      if (routerName === undefined) throw notHere(`Router "${provider.router}"`);
      let name = existing?.metadata.name;
      if (name === undefined) {
        name = providerObjectName(this.#namespace, provider.id);
        if (providerId(this.#namespace, name) !== provider.id)
          throw new InvalidResourceError(
            `id: "${provider.id}" cannot be the id of a ModelProvider in namespace "${this.#namespace}"`,
            'id',
          );
        if (providerObjects.some((cr) => cr.metadata.name === name)) {
          throw new ConflictError(`ModelProvider "${name}" already exists in namespace "${this.#namespace}" (not served yet)`);
        }
      }
      // The key: a new or changed one goes to the gateway's Secret; an unchanged one stays where it is.
      const keptRef = before && before.key === provider.key ? existing?.spec?.apiKeySecretRef : undefined;
      const newKey = provider.key !== undefined && !keptRef ? provider.key : undefined;
      const keyRef = provider.key === undefined ? undefined : (keptRef ?? { name: providerKeySecretName(name), key: PROVIDER_KEY_FIELD });
      // The Secret is written before the resource names it, and without force: if the name is a
      // Secret someone else wrote (a GatewayUser's `<name>-api-key`, say), the API server answers
      // 409 and nothing is written. Once the ModelProvider exists it becomes the Secret's owner.
      if (newKey !== undefined) await this.#writeKey(providerKeySecretName(name), newKey);
      const applied = await this.#resources.apply<CR>(MODEL_PROVIDERS, 'ModelProvider', name, providerToCR(provider, routerName, keyRef));
      if (newKey !== undefined) await this.#writeKey(providerKeySecretName(name), newKey, applied);
    }

    // Deletions: providers first, so no ModelProvider is left naming a deleted router.
    for (const name of providersGone) await this.#resources.delete(MODEL_PROVIDERS, name);
    for (const name of routersGone) await this.#resources.delete(MODEL_ROUTERS, name);
  }

  /** The Secret with a provider's key, owned by its ModelProvider (deleted with it). */
  async #writeKey(name: string, key: string, owner?: CR): Promise<void> {
    await applyObject(
      this.#resources.client,
      SECRETS,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          namespace: this.#namespace,
          labels: { 'app.kubernetes.io/managed-by': GATEWAY_FIELD_MANAGER },
          ...(owner?.metadata.uid
            ? { ownerReferences: [{ apiVersion: API_VERSION, kind: 'ModelProvider', name: owner.metadata.name, uid: owner.metadata.uid }] }
            : {}),
        },
        type: 'Opaque',
        data: { [PROVIDER_KEY_FIELD]: Buffer.from(key).toString('base64') },
      },
      { force: false, fieldManager: GATEWAY_FIELD_MANAGER },
    );
  }
}

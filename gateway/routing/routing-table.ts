// The routing table: an immutable view of one snapshot, indexed for the hot path. A request
// takes the table once at its start, so a reload never changes a request in flight.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { NativeApi } from '../wire/apis.ts';
import type { RouterSpec } from '../../core/resources/router.ts';
import { replicaUrls, type ProviderSpec, type ReplicaSpec } from '../../core/resources/provider.ts';
import type { Snapshot } from '../../core/resources/snapshot.ts';
import type { ProviderAdapter } from '../providers/adapter.ts';
import { adapterFor } from '../providers/registry.ts';
import { carbonModel, type CarbonModel } from '../metering/carbon.ts';
import { pricesFrom, type RouterPrices } from '../metering/cost.ts';
import { STRATEGY_PICKS, type Pick } from './strategies.ts';
import type { Cursor, ProviderState, ProviderStates } from './provider-state.ts';

/**
 * One replica of a provider: where routing sends a request. A provider with one address (or the
 * simulator) is one route keyed by its id, as before replicas; one with `urls` is a route per
 * address, keyed `<id>@<address>`, each with its own state (in flight, breaker, health), its
 * `spec` the provider's with `url` that address.
 */
export interface ProviderRoute {
  /** What its state, health and fleet-wide slots are kept by: the provider id, or `<id>@<address>` for one of several replicas. */
  readonly key: string;
  /** The replica's address when the provider lists several (`urls`); undefined for a provider of one. */
  readonly replica: string | undefined;
  readonly spec: ReplicaSpec;
  readonly adapter: ProviderAdapter;
  readonly carbon: CarbonModel | undefined;
  readonly state: ProviderState;
}

export interface RouterRoute {
  readonly spec: RouterSpec;
  readonly prices: RouterPrices;
  readonly providers: readonly ProviderRoute[];
  /** Providers able to serve each endpoint, in declaration order. */
  readonly byEndpoint: ReadonlyMap<Endpoint, readonly ProviderRoute[]>;
  /** The APIs besides chat that every one of its providers speaks natively: a request in one passes through (translators/: the identity). */
  readonly nativeApis: ReadonlySet<NativeApi>;
  readonly pick: Pick;
  readonly cursor: Cursor;
  /**
   * Where a request goes when this router cannot serve it, in order: each fallback followed by
   * its own (depth first), none twice, this router never (core/resources/fallbacks.ts).
   */
  readonly fallbacks: readonly RouterRoute[];
  /** A request too long for this router's context goes to the first fallback it fits. */
  readonly contextFallback: boolean;
}

/** The public description of a model (spec 2.4) in OpenAI's model object. */
export interface ModelInfo {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  type: string;
  aliases: string[];
  max_context_length: number;
}

export class RoutingTable {
  readonly version: string;
  readonly routers: readonly RouterRoute[];
  readonly models: readonly ModelInfo[];
  /** Every provider of every router. */
  readonly providerList: readonly ProviderRoute[];
  readonly #byName: ReadonlyMap<string, RouterRoute>;
  readonly #providers: ReadonlyMap<string, ProviderRoute>;

  private constructor(version: string, routers: RouterRoute[], createdAt: number) {
    this.version = version;
    this.routers = routers;
    const byName = new Map<string, RouterRoute>();
    for (const router of routers) {
      byName.set(router.spec.name, router);
      for (const alias of router.spec.aliases) byName.set(alias, router);
    }
    this.#byName = byName;
    this.providerList = routers.flatMap((r) => r.providers);
    this.#providers = new Map(this.providerList.map((p) => [p.key, p]));
    this.models = routers.map((r) => ({
      id: r.spec.name,
      object: 'model',
      created: createdAt,
      owned_by: 'tollgate',
      type: r.spec.type,
      aliases: r.spec.aliases,
      max_context_length: r.spec.max_context_length,
    }));
  }

  /** A provider's route by its key (the provider id, or `<id>@<address>` for one of several replicas). */
  provider(key: string): ProviderRoute | undefined {
    return this.#providers.get(key);
  }

  /** A router by name or alias. */
  lookup(name: string): RouterRoute | undefined {
    return this.#byName.get(name);
  }

  /** Builds the table of a snapshot that has passed its consistency checks. */
  static build(snapshot: Snapshot, states: ProviderStates, createdAt = Math.floor(Date.now() / 1000)): RoutingTable {
    const byRouter = new Map<string, ProviderSpec[]>();
    for (const provider of snapshot.providers) {
      const list = byRouter.get(provider.router);
      if (list) list.push(provider);
      else byRouter.set(provider.router, [provider]);
    }
    const routers = snapshot.routers.map((spec) => buildRouter(spec, byRouter.get(spec.name) ?? [], states));
    const table = new RoutingTable(snapshot.version, routers, createdAt);
    states.retain(new Set(table.providerList.map((p) => p.key)), new Set(snapshot.routers.map((r) => r.name)));
    chainFallbacks(table);
    return table;
  }
}

function buildRouter(spec: RouterSpec, providerSpecs: ProviderSpec[], states: ProviderStates): RouterRoute {
  const providers = providerSpecs.flatMap((p) => replicaRoutes(p, states));
  const byEndpoint = new Map<Endpoint, ProviderRoute[]>();
  // A provider whose Service has no ready endpoint has no route, yet serves its endpoints: a
  // request there finds every replica down, not a router of the wrong type.
  for (const provider of providerSpecs) for (const endpoint of adapterFor(provider.type).endpoints) byEndpoint.set(endpoint, []);
  for (const provider of providers) {
    for (const endpoint of provider.adapter.endpoints) {
      const list = byEndpoint.get(endpoint);
      if (list) list.push(provider);
      else byEndpoint.set(endpoint, [provider]);
    }
  }
  const nativeApis = new Set(providers[0]?.adapter.speaks ?? []);
  for (const provider of providers) for (const api of nativeApis) if (!provider.adapter.speaks?.includes(api)) nativeApis.delete(api);
  return {
    spec,
    prices: pricesFrom(spec.costs),
    providers,
    byEndpoint,
    nativeApis,
    pick: STRATEGY_PICKS[spec.load_balancing_strategy],
    cursor: states.cursor(spec.name),
    fallbacks: [],
    contextFallback: spec.context_fallback ?? spec.fallbacks.length > 0,
  };
}

/**
 * The routes of one provider: one per replica address (urls), else one keyed by its id. A
 * provider naming a Service (service_ref) comes with `urls` its ready endpoints (gateway/kubernetes/
 * service-replicas.ts), none when none is ready; its routes are always keyed by address, so
 * a replica keeps its state as the Service scales.
 */
function replicaRoutes(spec: ProviderSpec, states: ProviderStates): ProviderRoute[] {
  const adapter = adapterFor(spec.type) as ProviderAdapter;
  const carbon = carbonModel(spec.carbon);
  if (spec.type === 'simulator' || spec.urls === undefined)
    return [{ key: spec.id, replica: undefined, spec: spec as ReplicaSpec, adapter, carbon, state: states.get(spec.id) }];
  return replicaUrls(spec).map((url) => {
    const key = `${spec.id}@${url}`;
    return { key, replica: url, spec: { ...spec, url } as ReplicaSpec, adapter, carbon, state: states.get(key) };
  });
}

/** Fills each router's fallback chain (the snapshot's fallbacks passed their checks: they name routers, and form no loop). */
function chainFallbacks(table: RoutingTable): void {
  const visit = (router: RouterRoute, chain: RouterRoute[], seen: Set<RouterRoute>) => {
    for (const name of router.spec.fallbacks) {
      const next = table.lookup(name);
      if (!next || seen.has(next)) continue;
      seen.add(next);
      chain.push(next);
      visit(next, chain, seen);
    }
  };
  for (const router of table.routers) {
    if (router.spec.fallbacks.length === 0) continue;
    const chain: RouterRoute[] = [];
    visit(router, chain, new Set([router]));
    (router as { fallbacks: readonly RouterRoute[] }).fallbacks = chain;
  }
}

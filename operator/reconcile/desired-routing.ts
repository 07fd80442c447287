// From every ModelRouter, ModelProvider and the Secrets they name to what the gateways should
// serve: the routing snapshot (no keys), the provider keys, and the conditions of each resource.
// Pure: the reconciler feeds it the informers' caches and writes what it returns. A resource
// that is invalid, conflicts, or names something missing is left out and says why in its
// conditions; every other resource keeps serving.
import { SNAPSHOT_FORMAT, type Snapshot } from '../../core/resources/snapshot.ts';
import type { RouterSpec } from '../../core/resources/router.ts';
import type { ProviderSpec } from '../../core/resources/provider.ts';
import { snapshotVersion } from '../../core/resources/snapshot-version.ts';
import { fallbackProblems, withoutRefusedFallbacks } from '../../core/resources/fallbacks.ts';
import { describeProblems, providerFromCR, routerFromCR, type ObjectMeta } from '../../core/resources/kubernetes/translate.ts';
import { condition, type DesiredCondition } from './conditions.ts';

export interface Resource {
  readonly metadata: ObjectMeta & { uid?: string };
  readonly spec?: unknown;
}

/** Secret data, decoded, by `namespace/name`. */
export type Secrets = ReadonlyMap<string, Readonly<Record<string, string>>>;

export interface RouterOutcome {
  readonly conditions: DesiredCondition[];
  readonly publicName: string | undefined;
  readonly providers: { ready: number; total: number };
}

export interface RoutingOutcome {
  readonly snapshot: Snapshot;
  /** Provider id -> API key, for the keys Secret. */
  readonly keys: Record<string, string>;
  /** By `namespace/name`. */
  readonly routers: Map<string, RouterOutcome>;
  readonly providers: Map<string, ProviderOutcome>;
}

export interface ProviderOutcome {
  readonly conditions: DesiredCondition[];
  /** A provider served: its id, and its router's namespace/name. */
  readonly served?: { readonly id: string; readonly routerKey: string };
}

export const keyOf = (meta: ObjectMeta) => `${meta.namespace ?? ''}/${meta.name}`;

export function computeRouting(routers: readonly Resource[], providers: readonly Resource[], secrets: Secrets): RoutingOutcome {
  const acceptedRouters = new Map<string, RouterSpec>(); // namespace/name -> spec
  const routerOutcomes = new Map<string, { conditions: DesiredCondition[]; publicName: string | undefined }>();
  const owners = new Map<string, string>(); // called name -> namespace/name of the router that owns it
  for (const cr of oldestFirst(routers)) {
    const key = keyOf(cr.metadata);
    const translated = routerFromCR(cr);
    if (!translated.ok) {
      routerOutcomes.set(key, {
        conditions: [condition('Accepted', false, 'InvalidSpec', describeProblems(translated.problems))],
        publicName: undefined,
      });
      continue;
    }
    const spec = translated.value;
    const taken = [spec.name, ...spec.aliases].find((name) => owners.has(name));
    if (taken !== undefined) {
      const message = `"${taken}" is already used by ModelRouter ${owners.get(taken)}, which is older; this router is not served`;
      routerOutcomes.set(key, { conditions: [condition('Accepted', false, 'NameConflict', message)], publicName: spec.name });
      continue;
    }
    for (const name of [spec.name, ...spec.aliases]) owners.set(name, key);
    acceptedRouters.set(key, spec);
    routerOutcomes.set(key, { conditions: [condition('Accepted', true, 'Accepted', 'The router is valid')], publicName: spec.name });
  }

  const servedProviders: ProviderSpec[] = [];
  const keys: Record<string, string> = {};
  const providerOutcomes = new Map<string, ProviderOutcome>();
  const counts = new Map<string, { ready: number; total: number }>();
  for (const cr of oldestFirst(providers)) {
    const key = keyOf(cr.metadata);
    const spec = (cr.spec ?? {}) as { routerRef?: { name?: string }; apiKeySecretRef?: { name?: string; key?: string } };
    const routerKey = `${cr.metadata.namespace ?? ''}/${spec.routerRef?.name ?? ''}`;
    const count = counts.get(routerKey) ?? { ready: 0, total: 0 };
    counts.set(routerKey, count);
    count.total++;
    const router = acceptedRouters.get(routerKey);
    const translated = providerFromCR(cr, router?.name ?? spec.routerRef?.name ?? '');
    if (!translated.ok) {
      providerOutcomes.set(key, {
        conditions: [
          condition('Accepted', false, 'InvalidSpec', describeProblems(translated.problems)),
          condition('Ready', false, 'InvalidSpec', 'The provider is not served'),
        ],
      });
      continue;
    }
    const accepted = condition('Accepted', true, 'Accepted', 'The provider is valid');
    if (!router) {
      const why = routerOutcomes.has(routerKey) ? `ModelRouter ${routerKey} is not accepted` : `ModelRouter ${routerKey} does not exist`;
      providerOutcomes.set(key, {
        conditions: [
          accepted,
          condition('ResolvedRefs', false, 'RouterNotFound', why),
          condition('Ready', false, 'RouterNotFound', 'The provider is not served'),
        ],
      });
      continue;
    }
    let apiKey: string | undefined;
    const ref = spec.apiKeySecretRef;
    if (ref?.name) {
      apiKey = secrets.get(`${cr.metadata.namespace}/${ref.name}`)?.[ref.key ?? ''];
      if (apiKey === undefined) {
        const why = secrets.has(`${cr.metadata.namespace}/${ref.name}`)
          ? `Secret ${ref.name} has no key "${ref.key}"`
          : `Secret ${ref.name} does not exist`;
        providerOutcomes.set(key, {
          conditions: [
            accepted,
            condition('ResolvedRefs', false, 'SecretNotFound', why),
            condition('Ready', false, 'SecretNotFound', 'The provider is not served'),
          ],
        });
        continue;
      }
    }
    servedProviders.push(translated.value);
    if (apiKey !== undefined) keys[translated.value.id] = apiKey;
    count.ready++;
    providerOutcomes.set(key, {
      conditions: [
        accepted,
        condition('ResolvedRefs', true, 'ResolvedRefs', 'The router and the key Secret exist'),
        condition('Ready', true, 'Ready', 'The provider is served'),
      ],
      served: { id: translated.value.id, routerKey },
    });
  }

  // Fallbacks that name no served router, or would close a loop, are left out (the router is
  // served without them) and named in its ResolvedRefs condition.
  const acceptedKeys = [...acceptedRouters.keys()];
  const fallbackRefusals = fallbackProblems([...acceptedRouters.values()]);
  const withFallbacks = withoutRefusedFallbacks([...acceptedRouters.values()], fallbackRefusals);
  const refusalsOf = (key: string) => fallbackRefusals.filter((p) => acceptedKeys[p.router] === key).map((p) => p.message);

  const routerResults = new Map<string, RouterOutcome>();
  const servedRouters: RouterSpec[] = [];
  for (const [key, outcome] of routerOutcomes) {
    const providerCount = counts.get(key) ?? { ready: 0, total: 0 };
    const accepted = acceptedRouters.get(key);
    const spec = accepted && withFallbacks[acceptedKeys.indexOf(key)];
    const conditions = [...outcome.conditions];
    if (spec) {
      servedRouters.push(spec);
      const refused = refusalsOf(key);
      conditions.push(
        refused.length > 0
          ? condition(
              'ResolvedRefs',
              false,
              'FallbackRefused',
              `${refused.join('; ')}; the router is served without ${refused.length === 1 ? 'that fallback' : 'those fallbacks'}`,
            )
          : condition(
              'ResolvedRefs',
              true,
              'ResolvedRefs',
              spec.fallbacks.length > 0 ? 'Every fallback router is served' : 'No fallback router is named',
            ),
      );
      const ready = providerCount.ready > 0;
      conditions.push(
        condition(
          'Ready',
          ready,
          ready ? 'Ready' : 'NoReadyProviders',
          ready ? `${providerCount.ready} of ${providerCount.total} providers are served` : 'No provider of this router is served',
        ),
      );
    } else {
      conditions.push(condition('Ready', false, outcome.conditions[0]!.reason, 'The router is not served'));
    }
    routerResults.set(key, { conditions, publicName: outcome.publicName, providers: providerCount });
  }
  const content = { routers: servedRouters, providers: servedProviders };
  return {
    snapshot: { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content },
    keys,
    routers: routerResults,
    providers: providerOutcomes,
  };
}

/** Oldest first, so the oldest wins a conflict; ties by namespace/name, so the order is stable. */
function oldestFirst(resources: readonly Resource[]): Resource[] {
  return [...resources].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      keyOf(a.metadata).localeCompare(keyOf(b.metadata)),
  );
}

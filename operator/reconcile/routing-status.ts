// The status each router and provider should have after a routing reconcile. Pure: the
// conditions come from computeRouting, Programmed from what the gateways report serving.
import type { Condition } from '../../core/resources/kubernetes/crd-schemas.ts';
import { condition, mergeConditions, type DesiredCondition } from './conditions.ts';
import type { RouterOutcome } from './desired-routing.ts';
import type { StatusPatch } from './status.ts';
import type { RoutingMode } from '../../core/resources/kinds.ts';

/** What a gateway pod says it serves (tg:gateways:<pod> in Redis). */
export interface GatewayReport {
  readonly pod: string;
  readonly version: string;
}

/**
 * Programmed: every gateway that reports serves the snapshot version just computed. Stricter than
 * the router's own generation (a change to another router makes every router wait for the new
 * version), but it needs no history of which version held which generation.
 */
export function programmedCondition(reports: readonly GatewayReport[] | undefined, version: string): DesiredCondition {
  if (reports === undefined)
    return {
      type: 'Programmed',
      status: 'Unknown',
      reason: 'ReportsUnavailable',
      message: "The gateways' reports cannot be read from Redis",
    };
  if (reports.length === 0)
    return { type: 'Programmed', status: 'Unknown', reason: 'NoGateways', message: 'No gateway reports the routing snapshot it serves' };
  const current = reports.filter((report) => report.version === version).length;
  if (current === reports.length)
    return condition('Programmed', true, 'Programmed', `Every gateway (${current}) serves routing snapshot ${version}`);
  return condition('Programmed', false, 'Pending', `${current} of ${reports.length} gateways serve routing snapshot ${version}`);
}

interface Generational {
  readonly metadata: { readonly generation?: number };
  readonly status?: { readonly conditions?: readonly Condition[] };
}

/** The routing mode a served router is in, and (queue mode) how many of its requests wait. */
export interface RouterQueueState {
  readonly mode: RoutingMode;
  readonly depth: number | undefined;
}

export function routerStatus(
  router: Generational,
  outcome: RouterOutcome,
  programmed: DesiredCondition,
  now: Date,
  queue?: RouterQueueState,
): StatusPatch {
  const accepted = outcome.conditions.some((c) => c.type === 'Accepted' && c.status === 'True');
  const desired = accepted ? [...outcome.conditions, programmed] : outcome.conditions;
  const generation = router.metadata.generation ?? 0;
  return {
    observedGeneration: generation,
    conditions: mergeConditions(router.status?.conditions, desired, generation, now),
    // null removes a name left from when the router was valid.
    publicName: outcome.publicName ?? null,
    providers: outcome.providers,
    // null removes what no longer applies (a router not served, or back in local mode).
    routingMode: queue?.mode ?? null,
    queueDepth: queue?.depth ?? null,
  };
}

/** `replicas`: how many are ready (provider-replicas.ts); undefined removes a count written before, if any. */
export function providerStatus(
  provider: Generational & { readonly status?: { readonly replicas?: number } },
  desired: readonly DesiredCondition[],
  now: Date,
  replicas?: number,
): StatusPatch {
  const generation = provider.metadata.generation ?? 0;
  const counted = replicas !== undefined ? { replicas } : provider.status?.replicas !== undefined ? { replicas: null } : {};
  return { observedGeneration: generation, conditions: mergeConditions(provider.status?.conditions, desired, generation, now), ...counted };
}

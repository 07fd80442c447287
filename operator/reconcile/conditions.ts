// Status conditions as Kubernetes defines them: keyed by type, positive types only, each with the
// generation it describes. A condition's lastTransitionTime moves only when its status changes.
import type { Condition } from '../../core/resources/kubernetes/crd-schemas.ts';

export type ConditionType = 'Accepted' | 'ResolvedRefs' | 'Ready' | 'Programmed';

export interface DesiredCondition {
  readonly type: ConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

export function condition(type: ConditionType, ok: boolean, reason: string, message: string): DesiredCondition {
  return { type, status: ok ? 'True' : 'False', reason, message };
}

/** The conditions to write: the desired ones, keeping the transition time of those unchanged. */
export function mergeConditions(
  current: readonly Condition[] | undefined,
  desired: readonly DesiredCondition[],
  generation: number,
  now: Date,
): Condition[] {
  return desired.map((want) => {
    const had = current?.find((c) => c.type === want.type);
    const lastTransitionTime = had && had.status === want.status ? had.lastTransitionTime : now.toISOString();
    return {
      type: want.type,
      status: want.status,
      reason: want.reason,
      message: want.message,
      observedGeneration: generation,
      lastTransitionTime,
    };
  });
}

/** True when writing `next` would change nothing a reader cares about. */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  if (!a || a.length !== b.length) return false;
  return b.every((want) => {
    const had = a.find((c) => c.type === want.type);
    return (
      had !== undefined &&
      had.status === want.status &&
      had.reason === want.reason &&
      had.message === want.message &&
      had.observedGeneration === want.observedGeneration
    );
  });
}

// Deciding whether a status write is needed, and which changes deserve an Event. Pure, shared by
// the routing and the user reconcilers. Every status write is an etcd revision and a watch event
// for every watcher, so a status equal to the current one is never written.
import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '../../core/resources/kubernetes/crd-schemas.ts';
import type { EventNote } from '../kube/events.ts';
import { sameConditions } from './conditions.ts';

/** A status as a JSON merge patch: a null field is removed, an absent one left alone. */
export type StatusPatch = Readonly<Record<string, unknown>> & { readonly conditions: readonly Condition[] };

/** True when the patch would change something: conditions by sameConditions, other fields by value. */
export function statusChanged(current: Readonly<Record<string, unknown>> | undefined, next: StatusPatch): boolean {
  return Object.entries(next).some(([field, value]) => {
    if (field === 'conditions') return !sameConditions(current?.conditions as Condition[] | undefined, next.conditions);
    // A field the patch removes (null) is unchanged when it is already absent.
    return !isDeepStrictEqual(current?.[field] ?? null, value ?? null);
  });
}

/**
 * The Events a change of conditions deserves: Accepted turning False (the resource is left out)
 * and Ready changing either way. Steady states, however long, say nothing more.
 */
export function notableTransitions(previous: readonly Condition[] | undefined, next: readonly Condition[]): EventNote[] {
  const before = (type: string) => previous?.find((c) => c.type === type)?.status;
  const notes: EventNote[] = [];
  for (const condition of next) {
    const was = before(condition.type);
    if (condition.type === 'Accepted' && condition.status === 'False' && was !== 'False') {
      notes.push({ type: 'Warning', reason: condition.reason, message: condition.message });
    }
    if (condition.type === 'Ready' && condition.status !== was) {
      notes.push({ type: condition.status === 'True' ? 'Normal' : 'Warning', reason: condition.reason, message: condition.message });
    }
  }
  return notes;
}

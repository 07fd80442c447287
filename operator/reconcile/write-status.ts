// One status write: skipped when nothing changed, through the status subresource (a merge patch
// the spec cannot ride along with), followed by the Events its transitions deserve.
import { isStatus, patchStatus, type KubeClient, type ResourceType } from '../../core/kubernetes/kube-client.ts';
import type { Condition } from '../../core/resources/kubernetes/crd-schemas.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { CustomObject } from '../kube/resources.ts';
import { notableTransitions, statusChanged, type StatusPatch } from './status.ts';

export interface StatusWriter {
  readonly client: KubeClient;
  readonly events: EventRecorder;
}

type WithConditions = Readonly<Record<string, unknown>> & { conditions?: readonly Condition[] };

/** Writes `next` if it changes the object's status; false when it did not need to, or the object is gone. */
export async function writeStatus(
  writer: StatusWriter,
  type: ResourceType,
  object: CustomObject<WithConditions>,
  next: StatusPatch,
  signal?: AbortSignal,
): Promise<boolean> {
  if (!statusChanged(object.status, next)) return false;
  const { name, namespace } = object.metadata;
  try {
    await patchStatus(writer.client, type, { namespace, name }, next, signal);
  } catch (error) {
    // Deleted since the cache saw it: its delete event is on its way, nothing to report.
    if (isStatus(error, 404)) return false;
    throw error;
  }
  for (const note of notableTransitions(object.status?.conditions, next.conditions)) await writer.events.record(object, note, signal);
  return true;
}

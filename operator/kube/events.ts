// Kubernetes Events (core/v1) for notable transitions, so `kubectl describe` tells the story.
// An Event is a courtesy: failing to write one is logged and never fails a reconcile.
import { randomBytes } from 'node:crypto';
import { FIELD_MANAGER, resourcePath, type KubeClient } from '../../core/kubernetes/kube-client.ts';
import type { Log } from '../../core/log.ts';
import { EVENTS, type NamespacedObject } from './resources.ts';

export interface EventNote {
  readonly type: 'Normal' | 'Warning';
  /** CamelCase, e.g. InvalidSpec; a condition's reason. */
  readonly reason: string;
  readonly message: string;
}

/** Events hold a short text; longer messages are cut (the full one is in the condition). */
const MAX_MESSAGE = 1024;

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  readonly #log: Log;

  /** `instance`: which replica reports, e.g. its leader-election identity. */
  constructor(client: KubeClient, instance: string, log: Log) {
    this.#client = client;
    this.#instance = instance;
    this.#log = log;
  }

  async record(object: NamespacedObject, note: EventNote, signal?: AbortSignal): Promise<void> {
    const { name, namespace } = object.metadata;
    try {
      await this.#client.request({
        method: 'POST',
        path: resourcePath(EVENTS, { namespace }),
        query: { fieldManager: FIELD_MANAGER },
        body: this.#event(object, note, new Date().toISOString()),
        signal,
      });
    } catch (error) {
      this.#log.warn({ err: error, object: `${namespace}/${name}`, reason: note.reason }, 'could not record an event');
    }
  }

  #event(object: NamespacedObject, note: EventNote, now: string) {
    const { name, namespace, uid, resourceVersion } = object.metadata;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      // As client-go names them: the object's name and a unique suffix.
      metadata: { name: `${name}.${Date.now().toString(16)}${randomBytes(3).toString('hex')}`, namespace },
      involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name, namespace, uid, resourceVersion },
      type: note.type,
      reason: note.reason,
      message: note.message.slice(0, MAX_MESSAGE),
      source: { component: FIELD_MANAGER },
      reportingComponent: FIELD_MANAGER,
      reportingInstance: this.#instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}

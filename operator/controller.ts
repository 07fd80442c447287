// Informer events to work-queue keys, and the work queue of one leadership term. Every replica
// keeps its informers' caches warm; only the leader has a queue, so only the leader reconciles
// and writes. A new term starts with every key queued, so nothing missed before it is lost.
import type { InformerEvent } from '../core/kubernetes/informer.ts';
import { SERVICE_NAME_LABEL, type EndpointSlice } from '../core/kubernetes/endpoint-slices.ts';
import type { Log } from '../core/log.ts';
import type { OperatorMetrics, ReconcileKind } from './health/metrics.ts';
import { WorkQueue } from './kube/work-queue.ts';
import type { NamespacedObject, SecretObject } from './kube/resources.ts';
import { reconcileRouting, ROUTING_KEY, type RoutingDeps } from './reconcile/routing.ts';
import { reconcileUser, USER_KEY_PREFIX, type UserDeps } from './reconcile/users.ts';
import { reconcileTeam, TEAM_KEY_PREFIX, type TeamDeps, type TeamObject } from './reconcile/teams.ts';
import type { UserObject } from './reconcile/user-state.ts';
import type { Tracer } from '@opentelemetry/api';
import { tracedReconcile } from './reconcile-trace.ts';
import { keysForSecret, keysForTeam, keysForUser, teamKey, userKey, worthReconciling } from './work-keys.ts';

export interface ControllerOptions {
  readonly routing: RoutingDeps;
  readonly users: UserDeps;
  readonly teams: TeamDeps;
  /** How often usage and Programmed are brought into status, by queueing every key. */
  readonly statusPeriodMs: number;
  readonly log: Log;
  /** Counts and times every reconcile; none in tests that do not look. */
  readonly metrics?: Pick<OperatorMetrics, 'reconcile'>;
  /** Each reconcile a span, when the operator traces. */
  readonly tracer?: Tracer | undefined;
}

export class Controller {
  readonly #options: ControllerOptions;
  #queue: WorkQueue | undefined;
  #lastTermStopped: Promise<void> = Promise.resolve();

  constructor(options: ControllerOptions) {
    this.#options = options;
  }

  routingChanged(event: InformerEvent<NamespacedObject>): void {
    if (worthReconciling(event)) this.#enqueue([ROUTING_KEY]);
  }

  /** A Service's EndpointSlice: the routing key, when a ModelProvider names that Service (its ready replicas in status). */
  endpointsChanged(event: InformerEvent<EndpointSlice>): void {
    const { namespace, labels } = event.object.metadata ?? {};
    const service = labels?.[SERVICE_NAME_LABEL];
    const named = this.#options.routing.providers
      .list()
      .some(
        (p) =>
          p.metadata.namespace === namespace && (p.spec as { serviceRef?: { name?: unknown } } | undefined)?.serviceRef?.name === service,
      );
    if (named) this.#enqueue([ROUTING_KEY]);
  }

  secretChanged(event: InformerEvent<SecretObject>): void {
    this.#enqueue(keysForSecret(event.object, this.#options.routing.providers.list(), this.#options.users.users.list()));
  }

  userChanged(event: InformerEvent<UserObject>): void {
    if (worthReconciling(event))
      this.#enqueue(keysForUser(event.object, this.#options.users.users.list(), this.#options.teams.teams.list()));
  }

  teamChanged(event: InformerEvent<TeamObject>): void {
    if (worthReconciling(event)) this.#enqueue(keysForTeam(event.object, this.#options.teams.teams.list()));
  }

  /** One leadership term: reconciles until the signal is aborted (leadership lost or stopping). */
  lead(signal: AbortSignal): void {
    if (signal.aborted) return;
    const queue = new WorkQueue({ process: (key) => this.#process(key, signal), log: this.#options.log });
    // Every status period too: usage and Programmed change without any event. A key failing
    // meanwhile is then retried at that pace at the latest, whatever its backoff has reached.
    const everything = () => {
      queue.add(ROUTING_KEY);
      for (const user of this.#options.users.users.list()) queue.add(userKey(user));
      for (const team of this.#options.teams.teams.list()) queue.add(teamKey(team));
    };
    const timer = setInterval(everything, this.#options.statusPeriodMs);
    this.#queue = queue;
    everything();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(timer);
        if (this.#queue === queue) this.#queue = undefined;
        this.#lastTermStopped = queue.stop();
      },
      { once: true },
    );
  }

  /** Resolves once the last term's running reconciles have ended. */
  stopped(): Promise<void> {
    return this.#lastTermStopped;
  }

  /**
   * Informers update their cache only after the handler returns, and a reconcile must read the
   * new state: keys are queued once the current turn (and so the cache update) is over.
   */
  #enqueue(keys: readonly string[]): void {
    if (keys.length === 0) return;
    setImmediate(() => {
      for (const key of keys) this.#queue?.add(key);
    });
  }

  #process(key: string, signal: AbortSignal): Promise<void> {
    if (key === ROUTING_KEY) return this.#measured('routing', key, () => reconcileRouting(this.#options.routing, signal));
    if (key.startsWith(USER_KEY_PREFIX))
      return this.#measured('user', key, () => reconcileUser(this.#options.users, key.slice(USER_KEY_PREFIX.length), signal));
    if (key.startsWith(TEAM_KEY_PREFIX))
      return this.#measured('team', key, () => reconcileTeam(this.#options.teams, key.slice(TEAM_KEY_PREFIX.length), signal));
    return Promise.reject(new Error(`unknown work-queue key ${key}`));
  }

  #measured(kind: ReconcileKind, key: string, reconcile: () => Promise<void>): Promise<void> {
    const { tracer, metrics } = this.#options;
    const run = tracer ? () => tracedReconcile(tracer, kind, key, reconcile) : reconcile;
    return metrics ? metrics.reconcile(kind, run) : run();
  }
}

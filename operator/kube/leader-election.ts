// Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection package.
// Every write is a replace carrying the resourceVersion just read, so of two candidates racing
// for the same lease one gets a 409 Conflict: two can never both believe they lead.
//
// Expiry is judged by the local clock from when this candidate last saw the lease change, not by
// the renewTime written in it, so clock skew between replicas cannot make a live lease look
// expired. A leader that cannot renew within renewDeadline (shorter than the lease duration)
// stops leading before any other candidate may take over.
import { sleep, type Sleep } from '../../core/kubernetes/backoff.ts';
import { isStatus, resourcePath, type KubeClient, type ObjectMeta } from '../../core/kubernetes/kube-client.ts';
import { silentLog, type Log } from '../../core/log.ts';

export interface LeaderElectionOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica, e.g. the pod name. */
  readonly identity: string;
  /** How long a lease holds without renewal. Default 15 s. */
  readonly leaseDurationSeconds?: number;
  /** A leader that has not renewed for this long stops leading. Default 2/3 of the lease duration. */
  readonly renewDeadlineMs?: number;
  /** A leader renews this often. Default 5 s. */
  readonly renewIntervalMs?: number;
  /** A candidate tries to acquire, and a leader retries a failed renewal, this often. Default 2 s. */
  readonly retryIntervalMs?: number;
  /** Called on becoming leader; the signal is aborted when leadership ends. */
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  readonly onStoppedLeading?: () => void;
  readonly now?: () => number;
  readonly sleep?: Sleep;
  readonly log?: Log;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: ObjectMeta;
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const LEASES = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' };

/** What one attempt to acquire or renew found. */
type Attempt = 'leading' | 'held-by-other' | 'conflict';

export class LeaderElector {
  readonly #options: LeaderElectionOptions;
  readonly #durationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryIntervalMs: number;
  readonly #now: () => number;
  readonly #sleep: Sleep;
  readonly #log: Log;
  readonly #stopping = new AbortController();
  /** The lease's resourceVersion as last seen, and when (local clock) it was first seen. */
  #observed: { resourceVersion: string; at: number } | undefined;
  #leadership: AbortController | undefined;
  #running: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#durationMs = (options.leaseDurationSeconds ?? 15) * 1000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? Math.floor((this.#durationMs * 2) / 3);
    this.#retryIntervalMs = options.retryIntervalMs ?? 2000;
    if (!Number.isInteger(options.leaseDurationSeconds ?? 15) || this.#durationMs < 1000)
      throw new Error('leaseDurationSeconds must be a whole number of seconds, at least 1');
    if (this.#renewDeadlineMs >= this.#durationMs) throw new Error('renewDeadlineMs must be shorter than the lease duration');
    if ((options.renewIntervalMs ?? 5000) >= this.#renewDeadlineMs) throw new Error('renewIntervalMs must be shorter than renewDeadlineMs');
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? sleep;
    this.#log = options.log ?? silentLog;
  }

  get isLeader(): boolean {
    return this.#leadership !== undefined;
  }

  start(): void {
    if (this.#running) throw new Error('the leader election is already started');
    this.#running = this.#run();
  }

  /** Stops competing; a leader first stops leading, then releases the lease for the other replica. */
  async stop(): Promise<void> {
    this.#stopping.abort(new Error('leader election stopped'));
    await this.#running;
    if (!this.#leadership) return;
    this.#stopLeading();
    await this.#release().catch((error) =>
      this.#log.warn({ err: error, lease: this.#options.name }, 'leader election: could not release the lease'),
    );
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      // Times are taken before the request: the server wrote no earlier than that, so other
      // candidates cannot count the lease as expired before startedAt + the lease duration.
      const startedAt = this.#now();
      if ((await this.#attempt(this.#renewDeadlineMs)) === 'leading') {
        this.#startLeading();
        await this.#renewWhileLeading(startedAt);
      }
      if (!signal.aborted) await this.#sleep(this.#retryIntervalMs, signal).catch(() => {});
    }
  }

  /** Renews until a renewal is refused or cannot be made before the deadline; returns on loss or stop. */
  async #renewWhileLeading(renewedAt: number): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      if (!(await this.#pause(this.#options.renewIntervalMs ?? 5000))) return;
      const renewal = await this.#renew(renewedAt);
      if (renewal.outcome === 'stopped') return;
      if (renewal.outcome !== 'leading') {
        this.#log.warn(
          { lease: this.#options.name, identity: this.#options.identity, outcome: renewal.outcome },
          'leader election: leadership lost',
        );
        this.#stopLeading();
        return;
      }
      renewedAt = renewal.startedAt;
    }
  }

  /** Tries, every retry interval, to renew before renewedAt + renewDeadline. */
  async #renew(renewedAt: number): Promise<{ outcome: Attempt | 'deadline' | 'stopped'; startedAt: number }> {
    const deadline = renewedAt + this.#renewDeadlineMs;
    for (;;) {
      const startedAt = this.#now();
      if (startedAt >= deadline) return { outcome: 'deadline', startedAt };
      const outcome = await this.#attempt(deadline - startedAt);
      if (this.#stopping.signal.aborted) return { outcome: 'stopped', startedAt };
      if (outcome !== undefined) return { outcome, startedAt };
      const pause = Math.min(this.#retryIntervalMs, deadline - this.#now());
      if (pause > 0 && !(await this.#pause(pause))) return { outcome: 'stopped', startedAt };
    }
  }

  /** Sleeps unless stopped; false when stopped. */
  #pause(ms: number): Promise<boolean> {
    return this.#sleep(ms, this.#stopping.signal).then(
      () => true,
      () => false,
    );
  }

  /** One acquire-or-renew, bounded in time; undefined when the API could not be reached. */
  async #attempt(timeoutMs: number): Promise<Attempt | undefined> {
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(Math.max(timeoutMs, 1))]);
    try {
      return await this.#tryAcquireOrRenew(signal);
    } catch (error) {
      if (!this.#stopping.signal.aborted)
        this.#log.warn({ err: error, lease: this.#options.name }, 'leader election: lease request failed');
      return undefined;
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const lease = await this.#read(signal);
    if (!lease) return this.#write('POST', this.#newLease(), signal);
    if (this.#heldByOther(lease)) return 'held-by-other';
    return this.#write('PUT', this.#takenOver(lease), signal);
  }

  #heldByOther(lease: Lease): boolean {
    const holder = lease.spec?.holderIdentity;
    const resourceVersion = lease.metadata.resourceVersion ?? '';
    if (this.#observed?.resourceVersion !== resourceVersion) this.#observed = { resourceVersion, at: this.#now() };
    if (!holder || holder === this.#options.identity) return false;
    const durationMs = (lease.spec?.leaseDurationSeconds ?? this.#durationMs / 1000) * 1000;
    return this.#observed.at + durationMs > this.#now();
  }

  #newLease(): Lease {
    const now = microTime(this.#now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#options.name, namespace: this.#options.namespace },
      spec: {
        holderIdentity: this.#options.identity,
        leaseDurationSeconds: this.#durationMs / 1000,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    };
  }

  /** The lease with us as holder; its resourceVersion stays, which makes the replace conditional. */
  #takenOver(lease: Lease): Lease {
    const now = microTime(this.#now());
    const ours = lease.spec?.holderIdentity === this.#options.identity;
    const transitions = lease.spec?.leaseTransitions ?? 0;
    return {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: this.#options.identity,
        leaseDurationSeconds: this.#durationMs / 1000,
        acquireTime: ours ? (lease.spec?.acquireTime ?? now) : now,
        renewTime: now,
        leaseTransitions: ours ? transitions : transitions + 1,
      },
    };
  }

  async #read(signal: AbortSignal): Promise<Lease | undefined> {
    try {
      return await this.#options.client.request<Lease>({ path: this.#path(this.#options.name), signal });
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async #write(method: 'POST' | 'PUT', lease: Lease, signal: AbortSignal): Promise<Attempt> {
    try {
      const path = this.#path(method === 'PUT' ? this.#options.name : undefined);
      const written = await this.#options.client.request<Lease>({ method, path, body: lease, signal });
      this.#observed = { resourceVersion: written.metadata.resourceVersion ?? '', at: this.#now() };
      return 'leading';
    } catch (error) {
      // 409: another candidate wrote first (AlreadyExists on create, Conflict on replace).
      if (isStatus(error, 409)) return 'conflict';
      throw error;
    }
  }

  /** Hands the lease over at once: no holder, so the next candidate need not wait for expiry. */
  async #release(): Promise<void> {
    const signal = AbortSignal.timeout(this.#renewDeadlineMs);
    const lease = await this.#read(signal);
    if (!lease || lease.spec?.holderIdentity !== this.#options.identity) return;
    const now = microTime(this.#now());
    const released: Lease = {
      ...lease,
      spec: { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    await this.#write('PUT', released, signal);
  }

  #path(name: string | undefined): string {
    return resourcePath(LEASES, { namespace: this.#options.namespace, name });
  }

  #startLeading(): void {
    const leadership = new AbortController();
    this.#leadership = leadership;
    this.#log.info({ lease: this.#options.name, identity: this.#options.identity }, 'leader election: started leading');
    Promise.resolve()
      .then(() => this.#options.onStartedLeading(leadership.signal))
      .catch((error) => this.#log.error({ err: error }, 'leader election: onStartedLeading failed'));
  }

  #stopLeading(): void {
    const leadership = this.#leadership;
    if (!leadership) return;
    this.#leadership = undefined;
    leadership.abort(new Error('leadership lost'));
    this.#options.onStoppedLeading?.();
  }
}

/** A MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

// A router worker (`tollgate router-worker`, or inside a gateway with --router-workers): reads the
// routers' streams `router.<model_id>` in the workers' consumer group, and gives waiting requests
// the slots of providers with room, on the fleet-wide numbers in Redis (queue-*.lua). It is woken
// by new entries (a blocking read), by a slot coming free (the freed channel), and at the time a
// pass said something changes by itself (a cool-down ending, a slot expiring). Entries another
// worker read but never answered are claimed after they sat idle `claimIdleMs`.
import type { Log } from '../../core/log.ts';
import type { AssignPass, QueueChoice, QueueForWorkers, QueueReader, TakenEntry } from '../../core/store/routing-queue.ts';
import { realTimers, type Timers } from '../../core/timers.ts';
import { LogThrottle } from '../observability/log-throttle.ts';
import { traceAnswers, type AnswerTracing } from './answer-trace.ts';
import { engineTargetOf, saturationOf } from '../routing/engine/engine-targets.ts';
import type { ProviderRoute, RouterRoute, RoutingTable } from '../routing/routing-table.ts';

export interface RouterWorkerOptions {
  /** This worker's consumer name in the group: unique per worker. */
  readonly consumer: string;
  /** Routers served, by name; undefined serves every router. */
  readonly routers?: readonly string[] | undefined;
  /** Entries read per stream at once. */
  readonly batch: number;
  /** Longest a read blocks (ms): a new router is read from within this time. */
  readonly blockMs: number;
  /** An entry another worker read and left unanswered this long is taken over (ms). */
  readonly claimIdleMs: number;
  /** Waiting requests looked at per pass. */
  readonly scan: number;
  /** lowest_latency: the share of choices that probe another provider. */
  readonly probeShare: number;
  readonly random?: () => number;
  readonly timers?: Timers;
  readonly log: Log;
  /** Told of each pass (metrics). */
  readonly onPass?: (router: string, pass: AssignPass, claimed: number) => void;
  /**
   * Engines' readings weighed (late binding: a slot of a saturated engine is not given): a reading
   * older than freshMs is not, and while one keeps requests waiting a pass runs every recheckMs.
   * Undefined: engines are not read (--engine-scrape-interval-ms 0).
   */
  readonly engines?: { readonly freshMs: number; readonly recheckMs: number } | undefined;
  /** Traces each answer to a traced request (answer-trace.ts); undefined: tracing is off. */
  readonly tracing?: AnswerTracing | undefined;
}

export class RouterWorker {
  readonly #queue: QueueForWorkers;
  readonly #reader: QueueReader;
  readonly #table: () => RoutingTable;
  readonly #options: RouterWorkerOptions;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #grouped = new Set<string>();
  /** Routers with a pass running, and whether another is due after it. */
  readonly #passes = new Map<string, { again: boolean }>();
  readonly #wakes = new Map<string, unknown>();
  /** Warnings collapse by kind: during a Redis outage every pass, read and claim would write its own. */
  readonly #throttle = new LogThrottle();
  #unlisten = () => {};
  #claimTimer: unknown;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();

  constructor(queue: QueueForWorkers, reader: QueueReader, table: () => RoutingTable, options: RouterWorkerOptions) {
    this.#queue = queue;
    this.#reader = reader;
    this.#table = table;
    this.#options = options;
    this.#timers = options.timers ?? realTimers;
    this.#random = options.random ?? Math.random;
  }

  start(): void {
    this.#unlisten = this.#queue.listenFreed((router) => {
      if (router !== null) this.#pass(router);
      else for (const served of this.#served()) this.#pass(served.spec.name);
    });
    this.#loop = this.#readLoop();
    this.#scheduleClaims();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unlisten();
    this.#timers.clearTimeout(this.#claimTimer);
    for (const timer of this.#wakes.values()) this.#timers.clearTimeout(timer);
    this.#throttle.close();
    // A blocked read ends with the connection.
    this.#reader.close();
    await this.#loop;
  }

  #served(): RouterRoute[] {
    const { routers } = this.#options;
    const all = this.#table().routers;
    return routers === undefined ? [...all] : all.filter((router) => routers.includes(router.spec.name));
  }

  /** What the scripts choose on for a router: its providers with their capacity and endpoints, its strategy. */
  #choice(name: string): QueueChoice | undefined {
    const router = this.#table().lookup(name);
    if (!router || router.spec.name !== name) return undefined;
    const { engines } = this.#options;
    return {
      providers: router.providers.map((p) => ({
        // A replica's own slots: each of a provider's replicas is chosen on its own.
        id: p.key,
        cap: p.spec.max_concurrent ?? -1,
        eps: `,${p.adapter.endpoints.join(',')},`,
        engine: engines && engineOf(p),
      })),
      engineFreshMs: engines?.freshMs,
      engineRecheckMs: engines?.recheckMs,
      // Prefix affinity is local mode's for now: queue mode places its requests least busy.
      strategy: router.spec.load_balancing_strategy === 'prefix_affinity' ? 'least_busy' : router.spec.load_balancing_strategy,
      seed: Math.floor(this.#random() * 2_147_483_646) + 1,
      scan: this.#options.scan,
      probe: this.#options.probeShare,
    };
  }

  async #readLoop(): Promise<void> {
    while (!this.#stopped) {
      try {
        const routers = this.#served().map((router) => router.spec.name);
        if (routers.length === 0) {
          await this.#sleep(this.#options.blockMs);
          continue;
        }
        const fresh = routers.filter((router) => !this.#grouped.has(router));
        if (fresh.length > 0) {
          await this.#queue.ensureGroups(fresh);
          for (const router of fresh) this.#grouped.add(router);
        }
        const read = await this.#reader.read(this.#options.consumer, routers, this.#options.batch, this.#options.blockMs);
        await Promise.all([...read].map(([router, entries]) => this.#take(router, entries, 0)));
      } catch (error) {
        if (this.#stopped) return;
        // A stream deleted with its group (Redis flushed or restarted empty) is made again.
        if (String((error as Error).message).startsWith('NOGROUP')) this.#grouped.clear();
        // While the connection is (re)connecting every read fails at once: only other failures are news.
        else if (this.#reader.connected)
          this.#warn('read', { consumer: this.#options.consumer }, `router worker: ${(error as Error).message}; retrying`);
        await this.#sleep(Math.min(1000, this.#options.blockMs));
      }
    }
  }

  async #take(router: string, entries: TakenEntry[], claimed: number): Promise<void> {
    if (entries.length === 0) return;
    const choice = this.#choice(router);
    if (!choice) return;
    const startedAt = Date.now();
    const pass = await this.#queue.take(router, choice, entries);
    this.#passed(router, pass, claimed, startedAt);
  }

  /** A pass over a router's waiting requests; passes asked for while one runs are folded into one more. */
  #pass(router: string): void {
    if (this.#stopped) return;
    const running = this.#passes.get(router);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.#passes.set(router, state);
    const choice = this.#choice(router);
    if (!choice) {
      this.#passes.delete(router);
      return;
    }
    const startedAt = Date.now();
    this.#queue
      .assign(router, choice)
      .then(
        (pass) => this.#passed(router, pass, 0, startedAt),
        (error: unknown) => this.#warn('pass', { router }, `router worker pass failed: ${(error as Error).message}`),
      )
      .finally(() => {
        this.#passes.delete(router);
        if (state.again) this.#pass(router);
      });
  }

  #passed(router: string, pass: AssignPass, claimed: number, startedAt: number): void {
    this.#options.onPass?.(router, pass, claimed);
    const { tracing } = this.#options;
    if (tracing !== undefined && pass.traced.length > 0) traceAnswers(tracing, router, this.#options.consumer, pass.traced, startedAt);
    const previous = this.#wakes.get(router);
    if (previous !== undefined) this.#timers.clearTimeout(previous);
    this.#wakes.delete(router);
    if (pass.wake > 0 && !this.#stopped) {
      const timer = this.#timers.setTimeout(
        () => {
          this.#wakes.delete(router);
          this.#pass(router);
        },
        Math.max(1, pass.wake - pass.now + 1),
      );
      this.#wakes.set(router, timer);
    }
  }

  #scheduleClaims(): void {
    if (this.#stopped) return;
    this.#claimTimer = this.#timers.setTimeout(
      () => void this.#claim().finally(() => this.#scheduleClaims()),
      this.#options.claimIdleMs / 2,
    );
  }

  /** Takes over what dead workers read and never answered. */
  async #claim(): Promise<void> {
    for (const router of this.#grouped) {
      try {
        const entries = await this.#queue.claim(router, this.#options.consumer, this.#options.claimIdleMs, this.#options.batch);
        if (entries.length > 0) {
          this.#options.log.info({ router, entries: entries.length }, 'router worker claimed entries another worker left unanswered');
          await this.#take(router, entries, entries.length);
        }
      } catch (error) {
        if (this.#stopped) return;
        // The stream is gone with its group (Redis restarted empty): the read loop makes it again.
        if (String((error as Error).message).startsWith('NOGROUP')) this.#grouped.delete(router);
        else this.#warn('claim', { router }, `router worker claim failed: ${(error as Error).message}`);
      }
    }
  }

  #warn(kind: string, details: object, message: string): void {
    this.#throttle.write(`router worker ${kind}`, 'warn', this.#options.log, details, message);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.#timers.setTimeout(resolve, ms));
  }
}

/** The engine a provider's slots are weighed against, when its signals are read. */
function engineOf(route: ProviderRoute) {
  const target = engineTargetOf(route);
  if (target === null) return undefined;
  const limits = saturationOf(route);
  return { target, maxWaiting: limits.max_waiting, maxKvCache: limits.max_kv_cache };
}

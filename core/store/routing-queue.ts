// The routing queue of queue mode (docs/routing-modes.md), an optional capability of the store:
// only a shared store (Redis) has one, and a gateway without it places every request itself. It
// is declared by role, each caller handed only its own: what a gateway does (add a request, hear
// its answer, give its slot back), what a router worker does (read the streams, claim what a dead
// worker left, give slots), and the statistics the metrics, the admin API and the operator read.
import type { CoolingPolicy, ProviderRef } from './provider-health.ts';

/** A provider as a worker passes it to the scripts: cap -1 is unlimited, eps ",chat,embeddings,". */
export interface QueueProvider {
  readonly id: string;
  readonly cap: number;
  readonly eps: string;
  /**
   * The engine replica this provider stands for, when its load is read (engine-signals.ts): a
   * slot is then given only while the engine is not saturated (late binding), and each slot
   * given counts into the requests sent to it since its last reading.
   */
  readonly engine?: QueueEngine | undefined;
}

/** An engine replica's signals as the scripts weigh them: its target key and saturation thresholds. */
export interface QueueEngine {
  readonly target: string;
  readonly maxWaiting: number;
  readonly maxKvCache: number;
}

/** How a worker chooses for one router. */
export interface QueueChoice {
  readonly providers: readonly QueueProvider[];
  readonly strategy: string;
  /** Seeds the scripts' random choices (shuffle, ties, probes). */
  readonly seed: number;
  /** Waiting requests looked at per pass. */
  readonly scan: number;
  /** lowest_latency: the share of choices that probe another provider. */
  readonly probe: number;
  /** Engine readings older than this (ms) are not weighed: the provider's slots alone decide. */
  readonly engineFreshMs?: number | undefined;
  /** While a saturated engine keeps requests waiting, how soon a pass looks again (ms): its next reading. */
  readonly engineRecheckMs?: number | undefined;
}

/** What a gateway puts in a router's stream. */
export interface QueueRequest {
  readonly id: string;
  /** The gateway process's reply channel id. */
  readonly gw: string;
  /** Who asks (a user id): a full waiting list is shared fairly between callers. */
  readonly caller: string;
  readonly endpoint: string;
  readonly priority: number;
  readonly maxWaitMs: number;
  readonly agingMs: number;
  readonly maxWaiting: number;
  readonly exclude: readonly string[];
  /** How long a slot lives without renewal (ms): the gateway renews its slots every third of it. */
  readonly slotTtlMs: number;
  /** The W3C traceparent of the request's queue span, when it is traced: the worker's span of its answer joins that trace. */
  readonly traceparent?: string | undefined;
}

/** An entry read from a stream, as queue-take.lua takes it. */
export interface TakenEntry {
  readonly sid: string;
  readonly id: string;
  readonly gw: string;
  readonly u: string;
  readonly ep: string;
  readonly pr: number;
  readonly mw: number;
  readonly ag: number;
  readonly mq: number;
  readonly ex: string[];
  readonly st: number;
  /** The request's traceparent, when it is traced. */
  readonly tp?: string;
}

/** A worker's answer to a traced request, for its span: the provider given, or why none was. */
export interface TracedAnswer {
  readonly requestId: string;
  readonly traceparent: string;
  readonly outcome: 'ok' | 'busy' | 'none';
  /** The provider (its key) whose slot was given; undefined when refused. */
  readonly provider: string | undefined;
  /** How long the request had waited when answered (ms, Redis time). */
  readonly waitedMs: number;
}

/** A pass of giving slots: how many were given, how many still wait, when to look again by itself (ms, Redis time; 0: on a release only). */
export interface AssignPass {
  readonly given: number;
  readonly waiting: number;
  readonly wake: number;
  /** Redis's clock when the pass ran (ms): `wake - now` is how long to wait. */
  readonly now: number;
  /** The pass's answers to traced requests. */
  readonly traced: readonly TracedAnswer[];
}

export type Cancelled = { status: 'cancelled'; retryAfterSeconds: number } | { status: 'assigned'; provider: string } | { status: 'gone' };

/** An entry added to its router's stream (its stream id), or refused at once: the stream holds too many no worker took. */
export type Enqueued = { status: 'queued'; streamId: string } | { status: 'full'; retryAfterSeconds: number };

/**
 * What became of a request, asked after a reconnection: the provider given; refused ('-'); dropped
 * while no one listened ('x'); still waiting or queued; or lost (Redis lost it).
 */
export type RequestStatus = { status: 'assigned'; provider: string } | { status: 'refused' } | { status: 'waiting' } | { status: 'lost' };

/** How a request ended on its provider, for the fleet-wide metrics. */
export interface SlotEnding {
  readonly outcome: 'ok' | 'fail' | 'timeout' | 'limited' | 'none';
  readonly ttftMs?: number | undefined;
  readonly latencyMs?: number | undefined;
  readonly tpotMs?: number | undefined;
  readonly retryAfterMs?: number | undefined;
}

/** A slot a gateway holds for one of its requests. */
export interface HeldSlot {
  readonly router: string;
  readonly provider: string;
  readonly requestId: string;
}

/** A provider's live numbers, as the metrics and the admin API show them. */
export interface ProviderLive {
  readonly slotsInUse: number;
  readonly coolingUntil: number;
  readonly ttftMs: number | undefined;
  readonly latencyMs: number | undefined;
  readonly tpotMs: number | undefined;
  readonly errorRate: number | undefined;
  readonly timeoutRate: number | undefined;
  readonly limited: number;
  readonly ttftP95Ms: number | undefined;
}

/** Told of each message on a channel, and of null when messages may have been missed (a reconnection). */
export type QueueListener = (message: string | null) => void;

/** What a gateway does to the queue. */
export interface QueueForGateways {
  /** Adds a request to its router's stream, unless `maxInStream` entries wait for a worker there already. */
  enqueue(router: string, request: QueueRequest, maxInStream: number): Promise<Enqueued>;
  /** What became of a request, asked after a reconnection. */
  status(router: string, requestId: string, streamId: string): Promise<RequestStatus>;
  /** The gateway's reply channel: the answers to its requests. */
  listenReplies(gateway: string, listener: QueueListener): () => void;
  /** The request leaves the queue (its client went away, or no answer came in time). */
  cancel(router: string, requestId: string, maxWaitMs: number): Promise<Cancelled>;
  /**
   * Gives a slot back, with how the request ended on its provider; a failure counts towards a
   * cool-down of the provider as `cooling` says. Resolves with whether it started one.
   */
  release(router: string, provider: string, requestId: string, ending: SlotEnding, cooling: CoolingPolicy): Promise<boolean>;
  /** Keeps the gateway's slots alive. */
  renew(slotTtlMs: number, slots: readonly HeldSlot[]): Promise<void>;
}

/** A router worker's reads of the streams, on a connection of its own (they block). */
export interface QueueReader {
  read(consumer: string, routers: readonly string[], count: number, blockMs: number): Promise<Map<string, TakenEntry[]>>;
  /** Whether its connection is up (while it reconnects every read fails at once). */
  readonly connected: boolean;
  /** Ends its connection, and with it a read that blocks. */
  close(): void;
}

/** What a router worker does to the queue. */
export interface QueueForWorkers {
  ensureGroups(routers: readonly string[]): Promise<void>;
  /** A reader whose reads block up to `blockMs`. */
  reader(blockMs: number): QueueReader;
  /** Takes over the router's entries a worker read but left unanswered longer than `minIdleMs`. */
  claim(router: string, consumer: string, minIdleMs: number, count: number): Promise<TakenEntry[]>;
  /** Takes `entries` read from the stream into the waiting list, and gives slots. */
  take(router: string, choice: QueueChoice, entries: readonly TakenEntry[]): Promise<AssignPass>;
  /** Gives slots to the requests waiting. */
  assign(router: string, choice: QueueChoice): Promise<AssignPass>;
  /** Each router with a slot come free. */
  listenFreed(listener: QueueListener): () => void;
}

/** What the metrics, the admin API and the operator read of the queue. */
export interface QueueStatistics {
  /** Requests of the router in its stream not yet taken by a worker, and those waiting for a slot. */
  backlog(router: string): Promise<{ inStream: number; waiting: number }>;
  /** Every request of the router not yet given a slot. */
  depth(router: string): Promise<number>;
  /** The providers' live numbers, fleet-wide. */
  providers(providers: readonly ProviderRef[], now: number): Promise<Map<string, ProviderLive>>;
}

/** The queue, by role. */
export interface RoutingQueue {
  readonly gateways: QueueForGateways;
  readonly workers: QueueForWorkers;
  readonly statistics: QueueStatistics;
}

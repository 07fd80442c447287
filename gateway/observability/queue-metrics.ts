// Prometheus metrics of queue mode (docs/routing-modes.md), on the registry of the process that
// serves them: a gateway (what its requests saw of the queue) or a router worker (what it did).
// The fleet-wide numbers (queue depth, slots in use, capacity) are read from Redis at scrape
// time, so no request pays for them.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueStatistics } from '../../core/store/routing-queue.ts';
import type { RoutingTable } from '../routing/routing-table.ts';

const WAIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface FleetSource {
  readonly queue: QueueStatistics;
  /** The routers served now; only those in queue mode are read. */
  readonly table: () => RoutingTable;
  readonly isQueued: (router: RoutingTable['routers'][number]) => boolean;
}

export class QueueMetrics {
  readonly waitSeconds: Histogram<'router'>;
  readonly assignments: Counter<'router' | 'provider'>;
  readonly rejections: Counter<'router' | 'reason'>;
  readonly fallbacks: Counter<'router'>;
  readonly passes: Counter<'router'>;
  readonly workerAssigned: Counter<'router'>;
  readonly claims: Counter<'router'>;

  constructor(registry: Registry, fleet: FleetSource | undefined) {
    const registers = [registry];
    this.waitSeconds = new Histogram({
      name: 'tollgate_queue_wait_seconds',
      help: 'Queue mode: time a request waited for its provider slot (the answer of a worker), by router.',
      labelNames: ['router'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.assignments = new Counter({
      name: 'tollgate_queue_assignments_total',
      help: 'Queue mode: provider slots given to requests of this gateway, by router and provider.',
      labelNames: ['router', 'provider'],
      registers,
    });
    this.rejections = new Counter({
      name: 'tollgate_queue_rejections_total',
      help: 'Queue mode: requests refused, by router and reason (busy: 503 Model is too busy; none: no provider could take it; unavailable: Redis down and the router refuses).',
      labelNames: ['router', 'reason'],
      registers,
    });
    this.fallbacks = new Counter({
      name: 'tollgate_queue_fallbacks_total',
      help: 'Queue mode: requests routed in the gateway because Redis did not answer.',
      labelNames: ['router'],
      registers,
    });
    this.passes = new Counter({
      name: 'tollgate_router_worker_passes_total',
      help: "Router workers of this process: passes over a router's waiting requests.",
      labelNames: ['router'],
      registers,
    });
    this.workerAssigned = new Counter({
      name: 'tollgate_router_worker_assigned_total',
      help: 'Router workers of this process: provider slots given.',
      labelNames: ['router'],
      registers,
    });
    this.claims = new Counter({
      name: 'tollgate_router_worker_claims_total',
      help: 'Router workers of this process: entries taken over from a worker that read them and never answered.',
      labelNames: ['router'],
      registers,
    });
    if (fleet) registerFleetGauges(registers, fleet);
  }
}

function registerFleetGauges(registers: Registry[], fleet: FleetSource): void {
  const queued = () => fleet.table().routers.filter(fleet.isQueued);
  // The registry collects every metric at once: the two gauges share one read per router and scrape.
  let reading: Promise<Map<string, { inStream: number; waiting: number }>> | undefined;
  const backlogs = () => {
    reading ??= (async () => {
      const found = new Map<string, { inStream: number; waiting: number }>();
      for (const router of queued()) {
        try {
          found.set(router.spec.name, await fleet.queue.backlog(router.spec.name));
        } catch {
          // Redis down: the router is left out of this scrape.
        }
      }
      return found;
    })().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  new Gauge({
    name: 'tollgate_queue_depth',
    help: 'Queue mode: requests of the router waiting, fleet-wide (in its stream or for a slot).',
    labelNames: ['router'],
    registers,
    async collect() {
      this.reset();
      for (const [router, backlog] of await backlogs()) this.set({ router }, backlog.inStream + backlog.waiting);
    },
  });
  new Gauge({
    name: 'tollgate_router_worker_lag',
    help: "Queue mode: entries of the router's stream no worker has taken yet (growing: too few workers).",
    labelNames: ['router'],
    registers,
    async collect() {
      this.reset();
      for (const [router, backlog] of await backlogs()) this.set({ router }, backlog.inStream);
    },
  });
  new Gauge({
    name: 'tollgate_provider_slots_in_use',
    help: 'Queue mode: slots of the provider held, fleet-wide.',
    labelNames: ['router', 'provider'],
    registers,
    async collect() {
      this.reset();
      const providers = queued().flatMap((router) => router.providers.map((p) => ({ router: router.spec.name, id: p.spec.id })));
      try {
        const live = await fleet.queue.providers(providers, Date.now());
        for (const { router, id } of providers) this.set({ router, provider: id }, live.get(id)?.slotsInUse ?? 0);
      } catch {
        // Redis down: left out of this scrape.
      }
    },
  });
  new Gauge({
    name: 'tollgate_provider_capacity',
    help: 'max_concurrent of the provider (absent when unlimited).',
    labelNames: ['router', 'provider'],
    registers,
    collect() {
      this.reset();
      for (const router of queued()) {
        for (const provider of router.providers) {
          const cap = provider.spec.max_concurrent;
          if (cap !== undefined) this.set({ router: router.spec.name, provider: provider.spec.id }, cap);
        }
      }
    },
  });
}

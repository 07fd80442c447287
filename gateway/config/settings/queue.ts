// Settings of routing: the default routing mode, and for queue mode the router workers run in the
// gateway, what happens while Redis is down, and how long and how many requests wait for a slot;
// and how often the engines' own load is read (engine signals).
// One group of the gateway's settings registry (gateway/config/settings.ts); the docs list them
// with the routing modes (docs/routing-modes.md).
import { z } from 'zod';
import { ROUTING_MODE_SETTING, type Settings } from '../../../core/settings.ts';
import { QUEUE_FALLBACKS } from '../../../core/resources/kinds.ts';
import { PRIORITY_RANGE } from '../../../core/resources/user.ts';
import { Int } from './value-schemas.ts';

/** Routing modes and the queue, in the order --help and the docs list them (group `queue`). */
export const QUEUE_SETTINGS = {
  routingMode: {
    ...ROUTING_MODE_SETTING,
    doc: "Routing mode of the routers that set no `routing_mode`: `local`, the gateway picks the provider on its own counts; `queue`, router workers pick it on the fleet's numbers through the stream `router.<model_id>`, respecting each provider's `max_concurrent` ([routing-modes.md](routing-modes.md)). Queue mode needs `--redis-url`; without Redis, queue-mode routers are routed locally.",
    group: 'queue',
  },
  routerWorkers: {
    schema: Int(0, 64).default(0),
    value: '<n>',
    env: 'TOLLGATE_ROUTER_WORKERS',
    help: 'router workers run inside this gateway process (queue mode on one machine); 0: run them with tollgate router-worker',
    doc: "Router workers run inside this gateway process, so that one command serves queue mode on one machine. `0`: workers run apart, as `tollgate router-worker` (the chart's router-worker Deployment). Needs `--redis-url`.",
    group: 'queue',
  },
  queueWhenRedisDown: {
    schema: z.enum(QUEUE_FALLBACKS).default('local'),
    value: '<local|refuse>',
    env: 'TOLLGATE_QUEUE_WHEN_REDIS_DOWN',
    help: "queue-mode routers while Redis does not answer: local routes in the gateway (logged and counted), refuse answers 503; a router's queue.when_redis_down wins",
    group: 'queue',
  },
  queueMaxWaitSeconds: {
    schema: z.coerce.number().positive().max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_MAX_WAIT_SECONDS',
    help: 'longest a queue-mode request waits for a provider slot before 503 "Model is too busy"; a router\'s queue.max_wait_seconds wins',
    group: 'queue',
  },
  queueMaxWaiting: {
    schema: Int(0, 1_000_000).default(1000),
    value: '<n>',
    env: 'TOLLGATE_QUEUE_MAX_WAITING',
    help: 'most requests waiting for a slot per router; one more gets 503 "Model is too busy" at once; a router\'s queue.max_waiting wins',
    group: 'queue',
  },
  queueAgingSeconds: {
    schema: z.coerce.number().min(0).max(3600).default(2),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_AGING_SECONDS',
    help: 'waiting time one priority level is worth: a request goes ahead of one a level higher that arrived this much later',
    doc: `Waiting time one priority level is worth: a waiting request goes ahead of one of a priority one level higher that arrived this many seconds after it (priorities run from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}), so a lower priority waits longer but never for ever ([routing-modes.md](routing-modes.md#priorities)). Set it the same on every gateway.`,
    group: 'queue',
  },
  engineScrapeIntervalMs: {
    schema: Int(0, 60_000)
      .refine((ms) => ms === 0 || ms >= 100, 'must be 0 (off) or from 100 ms')
      .default(500),
    value: '<ms>',
    env: 'TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS',
    help: "how often each vllm provider's /metrics is read (one gateway at a time with Redis); a scrape not answered within this long is aborted, signals older than three of it are not used; 0: never",
    doc: "How often each `vllm` provider's Prometheus `/metrics` is read for its engine's load (requests waiting and running, KV cache use, prefix-cache counters). With Redis one gateway scrapes each engine at a time and every gateway reads what it found; without, each gateway scrapes itself. A scrape not answered within this long is aborted; signals older than three intervals, or whose last scrape failed, are not used, and routing chooses as it does without them. `0`: engines are not read (for `vllm` providers that are not vLLM and serve no `/metrics`). Set it the same on every gateway.",
    group: 'queue',
  },
  queueSlotTtlSeconds: {
    schema: z.coerce.number().min(1).max(3600).default(30),
    value: '<s>',
    env: 'TOLLGATE_QUEUE_SLOT_TTL_SECONDS',
    help: 'a provider slot a gateway stops renewing (it died) comes back after this long; running requests renew theirs every third of it',
    group: 'queue',
  },
} as const satisfies Settings;

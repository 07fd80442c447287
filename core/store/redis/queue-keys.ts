// The routing queue's Redis keys and channels (docs/routing-modes.md), declared once: the
// TypeScript side uses the functions, and the Lua scripts get the same names through the prelude
// written from the same templates. Shared by the queue's parts (redis-queue-gateways.ts,
// -workers.ts, -statistics.ts) and provider health (redis-provider-health.ts).
//
// Two layouts. On one Redis (and behind Sentinel) a router's keys share the hash tag {q:<router>}
// and a provider's {p:<id>}, as they always have. On a Redis Cluster everything one router's
// scripts touch lies in one slot, the slot of its stream `router.<name>` (named by the spec, so
// its whole name is hashed): the router's keys, its providers' slots, metrics and recent times,
// and its requests' outcomes all carry the tag {router.<name>}. A provider serves one router, so
// its keys are its router's (provider health names both: ProviderRef).

import { PRIORITY_RANGE } from '../../resources/user.ts';
import { keys } from './keys.ts';
import { providerFieldsPrelude } from './provider-fields.ts';
import type { ScriptParts } from './scripts.ts';

/** Which names the queue's keys take: one Redis (or Sentinel), or a Redis Cluster. */
export type QueueLayout = 'one' | 'cluster';

/** `<router>` is the router's name, `<part>` a provider id, a request id or a caller. */
const TEMPLATES = {
  one: {
    /** Stream: the router's routing queue, named as the spec says. */
    stream: 'router.<router>',
    /** Sorted set: request ids waiting for a slot, by arrival minus priority times the aging step. */
    waiting: 'tg:q:{q:<router>}:waiting',
    /** Hash: request id -> JSON entry of a waiting request. */
    entries: 'tg:q:{q:<router>}:entries',
    /** Hash: last, pace, rs, rt, rr, assigned (queue-common.lua). */
    stats: 'tg:q:{q:<router>}:stats',
    /**
     * Hash: caller (user id) -> how many of the caller's requests wait; and, under this key and
     * `:<caller>`, a sorted set of the caller's waiting request ids, scored as in `waiting`.
     */
    callers: 'tg:q:{q:<router>}:callers',
    /** Hash: gateway id -> until when it listens for answers (ms); a cluster's only (below). */
    gateways: 'tg:q:{q:<router>}:gateways',
    /** Sorted set: request ids holding one of the provider's slots, by expiry (ms). */
    slots: 'tg:p:{p:<part>}:slots',
    /** Hash: the provider's live metrics and health, its fields declared in provider-fields.ts. */
    metrics: 'tg:p:{p:<part>}:metrics',
    /** List: the provider's last 50 times to first token (ms). */
    recent: 'tg:p:{p:<part>}:recent',
    /**
     * String with a TTL: the provider id a request was given; '-' once it will get none; 'x' when
     * it was dropped because no gateway listened for its answer (its gateway, if alive, asks again).
     */
    outcome: 'tg:q:outcome:<part>',
  },
  // Every key a script touches is one it is given (KEYS): none named by what it reads on the way,
  // which Redis could not redirect while the slot moves (the script would stop half done).
  cluster: {
    stream: 'router.<router>',
    waiting: 'tg:q:{router.<router>}:waiting',
    entries: 'tg:q:{router.<router>}:entries',
    stats: 'tg:q:{router.<router>}:stats',
    /** Hash: caller -> how many of the caller's requests wait (no set of each caller's ids: their keys are not known beforehand). */
    callers: 'tg:q:{router.<router>}:callers',
    /**
     * On a cluster a script cannot count a channel's subscribers (PUBSUB NUMSUB answers for the
     * node it runs on): each gateway says here, for the routers it waits on, until when it listens.
     */
    gateways: 'tg:q:{router.<router>}:gateways',
    slots: 'tg:p:{router.<router>}:<part>:slots',
    metrics: 'tg:p:{router.<router>}:<part>:metrics',
    recent: 'tg:p:{router.<router>}:<part>:recent',
    /** Hash: request id -> its outcome (as `outcome` on one Redis), remembered until its time in `expiries`. */
    outcomes: 'tg:q:{router.<router>}:outcomes',
    /** Sorted set: request ids of `outcomes`, by when they are forgotten (ms); the scripts drop what is past. */
    expiries: 'tg:q:{router.<router>}:expiries',
  },
} as const satisfies Record<QueueLayout, Record<string, string>>;

type KeyName = keyof (typeof TEMPLATES)['one'] | keyof (typeof TEMPLATES)['cluster'];
/** The names of a part of a router: a provider's keys, a request's outcome. */
type PartKeyName = 'slots' | 'metrics' | 'recent' | 'outcome';

/** Each name's key: of the router, or of a part of it (a provider, a request). */
export type QueueKeyNames = Record<Exclude<KeyName, PartKeyName>, (router: string) => string> &
  Record<PartKeyName, (router: string, part: string) => string> & {
    readonly layout: QueueLayout;
    /** Pub/sub: the answers to one gateway process's requests: `<request id>|ok|<provider>`, `|busy|<seconds>`, `|none|`. */
    reply(gateway: string): string;
  };

const fill = (template: string, router: string, part = '') => template.replace('<router>', router).replace('<part>', part);

/** A name the layout does not use. */
const unused = (layout: QueueLayout, name: string) => () => {
  throw new Error(`the queue's ${name} keys are not in the ${layout} layout`);
};

export function queueKeyNames(layout: QueueLayout): QueueKeyNames {
  const templates: Partial<Record<KeyName, string>> = TEMPLATES[layout];
  const allNames = new Set([...Object.keys(TEMPLATES.one), ...Object.keys(TEMPLATES.cluster)] as KeyName[]);
  const names = Object.fromEntries(
    [...allNames].map((name) => {
      const template = templates[name];
      return [name, template === undefined ? unused(layout, name) : (router: string, part?: string) => fill(template, router, part)];
    }),
  ) as Record<KeyName, (router: string, part?: string) => string>;
  return { ...names, layout, reply: (gateway: string) => REPLY_CHANNEL + gateway };
}

/** The names the layout uses (a name of the other layout's alone throws). */
export function layoutKeyNames(layout: QueueLayout): readonly KeyName[] {
  return Object.keys(TEMPLATES[layout]) as KeyName[];
}

/** The names on one Redis: what tests and tools that read a single Redis use. */
export const queueKeys = queueKeyNames('one');

const REPLY_CHANNEL = 'tg:q:reply:';
/** Pub/sub: the name of a router one of whose slots came free (workers give it to a waiting request). */
export const QUEUE_FREED_CHANNEL = 'tg:q:freed';
/** The consumer group of the router workers on every stream. */
export const WORKER_GROUP = 'tollgate-router-workers';
/** How long a request's outcome is remembered, so that a late duplicate of its entry is only acknowledged. */
export const OUTCOME_TTL_MS = 10 * 60_000;
/** The longest a slot lives without renewal, and a request waits, whatever an entry says (an entry is anyone's who can write to Redis). */
export const QUEUE_BOUNDS = { maxSlotTtlMs: 3_600_000, maxWaitMs: 3_600_000, maxAgingMs: 3_600_000 } as const;
/** The time constant of the rate at which slots are given (Retry-After): about the last 10 s count. */
export const SLOT_RATE_TAU_MS = 10_000;
/** On a cluster, how long a gateway's word that it listens holds (`gateways`): it says so again every third of it. */
export const LISTENING_TTL_MS = 15_000;

/** A Lua function building the template's key: `Q.<name>(router, part)`. */
function luaBuilder(name: string, template: string): string {
  const pieces = template.split(/(<router>|<part>)/).filter((piece) => piece !== '');
  const terms = pieces.map((piece) => (piece === '<router>' ? 'r' : piece === '<part>' ? 'p' : JSON.stringify(piece)));
  return `Q.${name} = function(r, p) return ${terms.join(' .. ')} end`;
}

/** The prelude of the queue scripts: Q.<name>(router, part) builds the same keys as queueKeyNames(layout). */
function queuePrelude(layout: QueueLayout): string {
  const lines = ['local Q = {}', ...Object.entries(TEMPLATES[layout]).map(([name, template]) => luaBuilder(name, template))];
  lines.push(
    `Q.reply = function(gw) return ${JSON.stringify(REPLY_CHANNEL)} .. gw end`,
    `Q.CLUSTER = ${layout === 'cluster'}`,
    `Q.FREED = ${JSON.stringify(QUEUE_FREED_CHANNEL)}`,
    `Q.OUTCOME_TTL_MS = ${OUTCOME_TTL_MS}`,
    `Q.MAX_SLOT_TTL_MS = ${QUEUE_BOUNDS.maxSlotTtlMs}`,
    `Q.MAX_WAIT_MS = ${QUEUE_BOUNDS.maxWaitMs}`,
    `Q.MAX_AGING_MS = ${QUEUE_BOUNDS.maxAgingMs}`,
    `Q.MIN_PRIORITY = ${PRIORITY_RANGE.min}`,
    `Q.MAX_PRIORITY = ${PRIORITY_RANGE.max}`,
    `Q.RATE_TAU_MS = ${SLOT_RATE_TAU_MS}`,
    `Q.LISTENING_TTL_MS = ${LISTENING_TTL_MS}`,
    // The engines' readings, shared by the fleet (redis-engine-signals.ts): what late binding
    // weighs. One hash for every router, so on a cluster the worker passes what it read of it.
    `Q.ENGINE_SIGNALS = ${JSON.stringify(keys.engineSignals)}`,
  );
  return lines.join('\n');
}

/** How every queue script is made: the preludes of the keys and of the provider's fields, then the shared steps. */
export function queueScriptParts(layout: QueueLayout): ScriptParts {
  return { prelude: `${queuePrelude(layout)}\n${providerFieldsPrelude()}`, before: ['health-common', 'queue-engine', 'queue-common'] };
}

/**
 * The keys a router's take and assign scripts are given: the router's eight, then each provider's
 * slots and metrics in the order of `providers` (queue-common.lua reads them by that order).
 */
export function routerScriptKeys(names: QueueKeyNames, router: string, providers: readonly string[]): string[] {
  const routerKeys = [
    names.stream(router),
    names.waiting(router),
    names.entries(router),
    names.stats(router),
    names.callers(router),
    names.gateways(router),
    ...outcomeKeys(names, router),
  ];
  return [...routerKeys, ...providers.flatMap((id) => [names.slots(router, id), names.metrics(router, id)])];
}

/**
 * The keys of a router's outcomes a script is given, two: on a cluster the hash and the expiries;
 * on one Redis, where each outcome is a key of its own (Q.outcome), the stream's name twice, unused.
 */
export function outcomeKeys(names: QueueKeyNames, router: string): [string, string] {
  if (names.layout === 'cluster') return [names.outcomes(router), names.expiries(router)];
  return [names.stream(router), names.stream(router)];
}

// The routing queue's Redis keys and channels (docs/routing-modes.md), declared once: the
// TypeScript side uses the functions, and the Lua scripts get the same names through the prelude
// written from the same templates. A router's keys share the hash tag {q:<router>}, a provider's
// {p:<id>}, so that a script's keys of one router, or of one provider, stay within a cluster slot.
// Shared by the queue's three parts (redis-queue-gateways.ts, -workers.ts, -statistics.ts).

import { PRIORITY_RANGE } from '../../resources/user.ts';
import { keys } from './keys.ts';
import { providerFieldsPrelude } from './provider-fields.ts';
import type { ScriptParts } from './scripts.ts';

/** `%s` is the router name, the provider id, the request id or the gateway's id. */
const TEMPLATES = {
  /** Stream: the router's routing queue, named as the spec says. */
  stream: 'router.%s',
  /** Sorted set: request ids waiting for a slot, by arrival minus priority times the aging step. */
  waiting: 'tg:q:{q:%s}:waiting',
  /** Hash: request id -> JSON entry of a waiting request. */
  entries: 'tg:q:{q:%s}:entries',
  /** Hash: last, pace, rs, rt, rr, assigned (queue-common.lua). */
  stats: 'tg:q:{q:%s}:stats',
  /**
   * Hash: caller (user id) -> how many of the caller's requests wait; and, under this key and
   * `:<caller>`, a sorted set of the caller's waiting request ids, scored as in `waiting`.
   */
  callers: 'tg:q:{q:%s}:callers',
  /** Sorted set: request ids holding one of the provider's slots, by expiry (ms). */
  slots: 'tg:p:{p:%s}:slots',
  /** Hash: the provider's live metrics and health, its fields declared in provider-fields.ts. */
  metrics: 'tg:p:{p:%s}:metrics',
  /** List: the provider's last 50 times to first token (ms). */
  recent: 'tg:p:{p:%s}:recent',
  /**
   * String with a TTL: the provider id a request was given; '-' once it will get none; 'x' when
   * it was dropped because no gateway listened for its answer (its gateway, if alive, asks again).
   */
  outcome: 'tg:q:outcome:%s',
  /** Pub/sub: the answers to one gateway process's requests: `<request id>|ok|<provider>`, `|busy|<seconds>`, `|none|`. */
  reply: 'tg:q:reply:%s',
} as const;

type KeyName = keyof typeof TEMPLATES;

export const queueKeys = Object.fromEntries(
  Object.entries(TEMPLATES).map(([name, template]) => [name, (part: string) => template.replace('%s', part)]),
) as Record<KeyName, (part: string) => string>;

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

/** The prelude of the queue scripts: Q.<name>(part) builds the same keys as queueKeys. */
function queuePrelude(): string {
  const lines = ['local Q = {}'];
  for (const [name, template] of Object.entries(TEMPLATES)) {
    const [before, after] = template.split('%s');
    lines.push(`Q.${name} = function(part) return ${JSON.stringify(before)} .. part .. ${JSON.stringify(after)} end`);
  }
  lines.push(
    `Q.FREED = ${JSON.stringify(QUEUE_FREED_CHANNEL)}`,
    `Q.OUTCOME_TTL_MS = ${OUTCOME_TTL_MS}`,
    `Q.MAX_SLOT_TTL_MS = ${QUEUE_BOUNDS.maxSlotTtlMs}`,
    `Q.MAX_WAIT_MS = ${QUEUE_BOUNDS.maxWaitMs}`,
    `Q.MAX_AGING_MS = ${QUEUE_BOUNDS.maxAgingMs}`,
    `Q.MIN_PRIORITY = ${PRIORITY_RANGE.min}`,
    `Q.MAX_PRIORITY = ${PRIORITY_RANGE.max}`,
    `Q.RATE_TAU_MS = ${SLOT_RATE_TAU_MS}`,
    // The engines' readings, shared by the fleet (redis-engine-signals.ts): what late binding weighs.
    `Q.ENGINE_SIGNALS = ${JSON.stringify(keys.engineSignals)}`,
  );
  return lines.join('\n');
}

/** How every queue script is made: the preludes of the keys and of the provider's fields, then the shared steps. */
export function queueScriptParts(): ScriptParts {
  return { prelude: `${queuePrelude()}\n${providerFieldsPrelude()}`, before: ['health-common', 'queue-engine', 'queue-common'] };
}

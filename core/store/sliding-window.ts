// Sliding-window rate counting, as the Redis scripts do it (lua/admit.lua): the previous fixed
// window's count weighted by how much of it still overlaps the last W ms, plus the current one's.
// The in-memory ledger uses this; the contract suite checks both stores agree.
import { RATE_LIMIT_NAMES, RATE_WINDOWS, type RateLimitName, type RateLimitPolicy } from '../resources/limits.ts';
import type { RateStatus } from './ledger.ts';

export interface WindowCounter {
  start: number;
  cur: number;
  prev: number;
}

export const FRESH: WindowCounter = Object.freeze({ start: -1, cur: 0, prev: 0 });

/** The counter as it stands at `now`: shifted forward by whole windows. */
export function rolled(counter: WindowCounter, now: number, windowMs: number): WindowCounter {
  const aligned = now - (now % windowMs);
  if (counter.start < 0 || aligned - counter.start >= 2 * windowMs) return { start: aligned, cur: 0, prev: 0 };
  if (aligned - counter.start >= windowMs) return { start: aligned, cur: 0, prev: counter.cur };
  return counter;
}

export interface WindowCheck {
  readonly name: RateLimitName;
  readonly limit: number;
  readonly counter: WindowCounter;
  readonly used: number;
  readonly cost: number;
  /** 0 when the request fits; otherwise milliseconds until it would. */
  readonly retryMs: number;
  readonly resetMs: number;
}

/** Checks one limit for a request costing `cost` (1 request, or its tokens). */
export function check(name: RateLimitName, limit: number, stored: WindowCounter, now: number, cost: number): WindowCheck {
  const windowMs = RATE_WINDOWS[name].windowMs;
  const counter = rolled(stored, now, windowMs);
  const elapsed = now - counter.start;
  const used = (counter.prev * (windowMs - elapsed)) / windowMs + counter.cur;
  let retryMs = 0;
  if (used + cost > limit) {
    if (cost > limit) retryMs = windowMs;
    else if (counter.cur + cost <= limit)
      retryMs = Math.ceil(windowMs - elapsed - ((limit - counter.cur - cost) * windowMs) / counter.prev);
    else retryMs = Math.ceil(windowMs - elapsed + windowMs * (1 - (limit - cost) / counter.cur));
    retryMs = Math.max(1, retryMs);
  }
  const resetMs = counter.cur + cost > 0 ? 2 * windowMs - elapsed : counter.prev > 0 ? windowMs - elapsed : 0;
  return { name, limit, counter, used, cost, retryMs, resetMs };
}

export function status(check: WindowCheck, admitted: boolean): RateStatus {
  const left = check.limit - check.used - (admitted ? check.cost : 0);
  return { limit: check.limit, remaining: Math.max(0, Math.floor(left)), resetMs: check.resetMs };
}

/** The limits a policy sets, in a fixed order. Twice a request: a loop, not keys() and flatMap(). */
export function limitsOf(policy: RateLimitPolicy): [RateLimitName, number][] {
  const limits: [RateLimitName, number][] = [];
  for (const name of RATE_LIMIT_NAMES) {
    const limit = policy[name];
    if (limit !== undefined) limits.push([name, limit]);
  }
  return limits;
}

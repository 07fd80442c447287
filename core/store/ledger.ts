// Money and limits, changed atomically per user, and per key and team when those have budgets or
// limits of their own (the levels of a request). Admission reserves a request's worst-case cost
// and takes its rate-limit share at every level in one step; settlement charges the real cost and
// releases the rest. Refusals change nothing. This is the budget guarantee: under any
// concurrency, across any number of gateway processes, no level's spent total exceeds its budget.
import type { RateLimitName, RateLimitPolicy } from '../resources/limits.ts';
import type { BudgetPeriod } from '../resources/kinds.ts';

export interface Reservation {
  /** Unique per request. */
  readonly id: string;
  readonly micros: bigint;
  /** After this long a reservation that was never settled (a crashed gateway) is released. */
  readonly ttlMs: number;
}

/** The levels a request is held and charged at: its key, its user, its team. */
export const LEVELS = ['key', 'user', 'team'] as const;
export type LevelName = (typeof LEVELS)[number];

/**
 * A level of a request besides its user's own: its API key's or its team's, when that has a budget
 * or rate limits. Its budget is the ledger's to read (as the user's), so a change applies at once.
 */
export interface OtherLevel {
  readonly level: 'key' | 'team';
  readonly id: string;
  /** The level's own rate limits, counted on the admission's scope; undefined for none. */
  readonly policy: RateLimitPolicy | undefined;
}

/** The ledger subject of a level: a user's id, or `key:<id>` / `team:<id>` (closing leases names them so). */
export function subjectOf(level: OtherLevel): string {
  return `${level.level}:${level.id}`;
}

export interface RateCharge {
  /** What the limits are counted on, besides the level: the router's name. */
  readonly scope: string;
  /** The user's limits; undefined when only another level has some. */
  readonly policy: RateLimitPolicy | undefined;
  /** Tokens counted now: the prompt at admission, the completion at settlement. */
  readonly tokens: number;
}

export interface Admission {
  readonly now: number;
  /** Absent for unpriced routers: nothing to reserve. */
  readonly reservation?: Reservation;
  /** Absent when no rate limit applies at any level. */
  readonly rate?: RateCharge;
  /** The request's key and team levels, when they have budgets or limits; absent for none. */
  readonly levels?: readonly OtherLevel[];
  /**
   * The user's team as the user's spec names it (null or absent for none), whether or not it has
   * a budget: a Redis Cluster keeps the money of a team's users in the team's hash slot.
   */
  readonly team?: string | null | undefined;
}

/** What a level's budget has left for the caller to see: the level with least room. */
export interface BudgetStatus {
  readonly level: LevelName;
  /** Room left after this request's worst-case hold. */
  readonly remainingMicros: bigint;
}

/** Where one kind of limit stands, for the x-ratelimit-* headers. */
export interface RateStatus {
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the window has room again for a request like this one (0 when it has). */
  readonly resetMs: number;
}

export type RateStatuses = Partial<Record<RateLimitName, RateStatus>>;

export type AdmissionResult =
  /** `rate`: each limit's state at the level with least room left; `budget`: absent without a hold or a budget. */
  | { readonly ok: true; readonly rate: RateStatuses; readonly budget?: BudgetStatus }
  | { readonly ok: false; readonly reason: 'budget'; readonly level: LevelName; readonly remainingMicros: bigint }
  | {
      readonly ok: false;
      readonly reason: 'rate';
      readonly level: LevelName;
      readonly limit: RateLimitName;
      readonly retryAfterMs: number;
      readonly rate: RateStatuses;
    }
  | { readonly ok: false; readonly reason: 'unknown_user' };

export interface Settlement {
  readonly now: number;
  /** The reservation admission made, if any. */
  readonly reservation?: Pick<Reservation, 'id' | 'micros'>;
  /** The real cost; 0 releases the reservation whole. */
  readonly actualMicros: bigint;
  readonly rate?: RateCharge;
  /** The levels the admission had. */
  readonly levels?: readonly OtherLevel[];
  /** The user's team, as the admission named it. */
  readonly team?: string | null | undefined;
}

export interface SettleResult {
  /** What was charged: the real cost, or less when a level's budget had no room left for all of it (the least of the levels). */
  readonly chargedMicros: bigint;
}

export interface Balance {
  readonly budgetMicros: bigint | null;
  readonly period: BudgetPeriod | null;
  /** Spent in the current period (or ever, without a period). */
  readonly spentMicros: bigint;
  /** Held by requests in flight. */
  readonly reservedMicros: bigint;
  readonly periodStart: Date | null;
  readonly periodEnd: Date | null;
  /** Spent per past and current period, by the period's first day (YYYY-MM-DD). */
  readonly history: Record<string, bigint>;
}

export interface Ledger {
  admit(userId: string, admission: Admission): Promise<AdmissionResult>;
  settle(userId: string, settlement: Settlement): Promise<SettleResult>;
  /**
   * A user's balance, or a key's or a team's with a subject of subjectOf(). A key's names its
   * user (`owner`): a Redis Cluster keeps a key's money with its user's.
   */
  balance(subject: string, now: number, owner?: string): Promise<Balance>;
}

// Money and limits, changed atomically per user. Admission reserves a request's worst-case cost
// and takes its rate-limit share in one step; settlement charges the real cost and releases the
// rest. Refusals change nothing. This is the budget guarantee: under any concurrency, across any
// number of gateway processes, the spent total never exceeds the budget.
import type { RateLimitName, RateLimitPolicy } from '../resources/limits.ts';
import type { BudgetPeriod } from '../resources/kinds.ts';

export interface Reservation {
  /** Unique per request. */
  readonly id: string;
  readonly micros: bigint;
  /** After this long a reservation that was never settled (a crashed gateway) is released. */
  readonly ttlMs: number;
}

export interface RateCharge {
  /** What the limits are counted on, besides the user: the router's name. */
  readonly scope: string;
  readonly policy: RateLimitPolicy;
  /** Tokens counted now: the prompt at admission, the completion at settlement. */
  readonly tokens: number;
}

export interface Admission {
  readonly now: number;
  /** Absent for unpriced routers: nothing to reserve. */
  readonly reservation?: Reservation;
  /** Absent when no rate limit applies. */
  readonly rate?: RateCharge;
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
  | { readonly ok: true; readonly rate: RateStatuses }
  | { readonly ok: false; readonly reason: 'budget'; readonly remainingMicros: bigint }
  | {
      readonly ok: false;
      readonly reason: 'rate';
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
}

export interface SettleResult {
  /** What was charged: the real cost, or less when the budget had no room left for all of it. */
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
  balance(userId: string, now: number): Promise<Balance>;
}

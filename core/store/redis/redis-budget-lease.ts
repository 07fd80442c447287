// A lease: room for requests that a gateway takes from Redis ahead of them, so that while a user
// is far from every limit most admissions need no round trip. The room is real: a hold in the
// user's holds zset and a share counted in every rate-limit window, taken atomically by the
// admission that asked for it (lua/admit.lua), at every level of the request (user, key, team),
// so the budget guarantee is the same as with one hold per request. The gateway admits against it here, settles each request against it, and
// gives back what is left when it closes (lua/settle.lua).
import { RATE_LIMIT_NAMES, RATE_WINDOWS, type RateLimitName, type RateLimitPolicy } from '../../resources/limits.ts';
import { subjectOf, type Admission, type BudgetStatus, type OtherLevel, type RateStatuses } from '../ledger.ts';

export const BUDGET_LEASES = {
  /** Default size of a lease: room for this many more requests like the one that asked for it. */
  requests: 32,
  /** Granted only while every limit has room for this many such leases beyond that request. */
  headroom: 4,
  /** A lease admits for this long at most, then gives back what it did not use. */
  openMs: 200,
  /**
   * Another gateway that would refuse a request while a lease may still be open waits this much
   * longer than openMs for it to come back (lua/admit.lua), so that room one gateway holds is not
   * refused by another: the give-back travels in the lease holder's next batch.
   */
  graceMs: 200,
} as const;

/** What one request takes of each limit: 1 request, or its tokens. */
const share = (name: RateLimitName, tokens: number) => (RATE_WINDOWS[name].unit === 'requests' ? 1 : tokens);

/** What settle.lua needs to change a lease's hold: from `before` to `after` micros. */
export interface HoldChange {
  readonly before: bigint;
  readonly after: bigint;
}

export class BudgetLease {
  readonly id: string;
  readonly userId: string;
  readonly scope: string;
  readonly grantedAt: number;
  readonly ttlMs: number;
  /** The key's and team's levels it holds room at too. */
  readonly levels: readonly OtherLevel[] | undefined;
  /** The user's team (a cluster's money home), as the admission named it. */
  readonly team: string | null | undefined;
  readonly #policy: RateLimitPolicy | undefined;
  readonly #snapshot: RateStatuses;
  readonly #budget: BudgetStatus | undefined;
  /** Worst-case costs admitted against it since the grant, for the budget status. */
  #admitted = 0n;
  /** Which limits of RATE_LIMIT_NAMES are set. */
  readonly #limited: readonly boolean[];
  /** Rate-limit room granted and left, per limit in RATE_LIMIT_NAMES order (0 for limits not set). */
  readonly #granted: number[];
  readonly #left: number[];
  #open = true;
  /** Budget left to admit against. */
  #room: bigint;
  /** The lease's hold in Redis, as this gateway last wrote it. */
  #held: bigint;
  /** Worst-case costs of the requests admitted against it and not yet settled. */
  #inflight = 0n;

  /**
   * `admission` is the one that asked for the lease, `size` how many requests like it the lease
   * holds room for, `statuses` and `budget` what that admission was told of its limits and budget.
   */
  constructor(id: string, userId: string, admission: Admission, size: number, statuses: RateStatuses, budget?: BudgetStatus) {
    this.id = id;
    this.userId = userId;
    this.scope = admission.rate?.scope ?? '-';
    this.grantedAt = admission.now;
    this.ttlMs = admission.reservation?.ttlMs ?? 0;
    this.levels = admission.levels;
    this.team = admission.team;
    this.#policy = admission.rate?.policy;
    this.#snapshot = statuses;
    this.#budget = budget;
    this.#room = this.#held = BigInt(size) * (admission.reservation?.micros ?? 0n);
    // A limit set at any level is counted in the lease's room: every level took the same share.
    this.#limited = RATE_LIMIT_NAMES.map(
      (name) => this.#policy?.[name] !== undefined || (this.levels ?? []).some((level) => level.policy?.[name] !== undefined),
    );
    this.#granted = RATE_LIMIT_NAMES.map((name, i) => (this.#limited[i] ? size * share(name, admission.rate!.tokens) : 0));
    this.#left = [...this.#granted];
  }

  /**
   * Admits `admission` against the lease when it is open, not past its time, under the same
   * limits, and has room for it on each; takes that room. False changes nothing.
   */
  admit(admission: Admission): boolean {
    if (!this.#open || admission.now >= this.grantedAt + BUDGET_LEASES.openMs || admission.now < this.grantedAt) return false;
    if (!samePolicy(admission.rate?.policy, this.#policy) || !sameLevels(admission.levels, this.levels)) return false;
    const micros = admission.reservation?.micros ?? 0n;
    if (micros > this.#room) return false;
    const tokens = admission.rate?.tokens ?? 0;
    for (let i = 0; i < RATE_LIMIT_NAMES.length; i++) {
      if (this.#limited[i] && this.#left[i]! < share(RATE_LIMIT_NAMES[i]!, tokens)) return false;
    }
    for (let i = 0; i < RATE_LIMIT_NAMES.length; i++) {
      if (this.#limited[i]) this.#left[i]! -= share(RATE_LIMIT_NAMES[i]!, tokens);
    }
    this.#room -= micros;
    this.#inflight += micros;
    this.#admitted += micros;
    return true;
  }

  /** Whether the lease holds room of this subject (a user's id, or subjectOf() a key or team). */
  charges(subject: string): boolean {
    return this.userId === subject || (this.levels ?? []).some((level) => subjectOf(level) === subject);
  }

  /** The budget with least room as at the grant, less what the lease has admitted since (its own room counted as free). */
  budget(): BudgetStatus | undefined {
    if (this.#budget === undefined) return undefined;
    const remaining = this.#budget.remainingMicros - this.#admitted;
    return { level: this.#budget.level, remainingMicros: remaining < 0n ? 0n : remaining };
  }

  /** Where the limits stand for a request admitted against the lease: as at the grant, less what the lease has admitted since. */
  statuses(now: number): RateStatuses {
    const out: RateStatuses = {};
    for (let i = 0; i < RATE_LIMIT_NAMES.length; i++) {
      const name = RATE_LIMIT_NAMES[i]!;
      const status = this.#snapshot[name];
      if (status === undefined) continue;
      const resetMs = status.resetMs === 0 ? 0 : Math.max(0, status.resetMs - (now - this.grantedAt));
      out[name] = { limit: status.limit, remaining: Math.max(0, status.remaining - (this.#granted[i]! - this.#left[i]!)), resetMs };
    }
    return out;
  }

  /**
   * Settles a request admitted against the lease, whose hold was `micros` and whose real cost is
   * `actualMicros`. While the lease is open, what the request did not use goes back to its room;
   * once closed, the request's whole hold is released. Returns the change of the lease's hold.
   */
  settle(micros: bigint, actualMicros: bigint): HoldChange {
    const before = this.#held;
    this.#inflight -= micros;
    const unused = micros > actualMicros ? micros - actualMicros : 0n;
    if (this.#open) this.#room += unused;
    this.#held -= this.#open ? micros - unused : micros;
    return { before, after: this.#held };
  }

  /**
   * Ends admissions against the lease. Returns the change of its hold (down to what requests in
   * flight still hold) and its unused rate-limit room, in RATE_LIMIT_NAMES order, to give back.
   */
  close(): { hold: HoldChange; unused: readonly number[] } {
    this.#open = false;
    const before = this.#held;
    this.#held = this.#inflight;
    this.#room = 0n;
    return { hold: { before, after: this.#held }, unused: this.#left };
  }
}

function sameLevels(a: readonly OtherLevel[] | undefined, b: readonly OtherLevel[] | undefined): boolean {
  if (a === b) return true;
  const n = a?.length ?? 0;
  if (n !== (b?.length ?? 0)) return false;
  for (let i = 0; i < n; i++) {
    const x = a![i]!;
    const y = b![i]!;
    if (x.level !== y.level || x.id !== y.id || !samePolicy(x.policy, y.policy)) return false;
  }
  return true;
}

function samePolicy(a: RateLimitPolicy | undefined, b: RateLimitPolicy | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return RATE_LIMIT_NAMES.every((name) => a[name] === b[name]);
}

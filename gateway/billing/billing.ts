// Charges every request to its caller's budget and limits: admission holds the worst-case cost
// and takes the rate-limit share before anything is forwarded; settlement charges the real cost
// and releases the rest once the answer is over, whatever way it ended. Settlement and the usage
// record are written after the answer, so they never delay it.
import type { FastifyBaseLogger } from 'fastify';
import type { Endpoint } from '../resources/kinds.ts';
import type { RateLimitPolicy } from '../resources/limits.ts';
import type { JsonObject } from '../providers/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { Caller } from '../http/auth.ts';
import type { Ledger, RateCharge, RateStatuses, Reservation } from '../store/ledger.ts';
import type { UsageLog } from '../store/usage-log.ts';
import { StoreUnavailableError } from '../store/store-errors.ts';
import { promptTokenCount } from '../usage/usage-block.ts';
import { TokenBounds, TokenCount } from '../usage/tokens.ts';
import { billingErrors } from './billing-errors.ts';
import { randomId } from './random-id.ts';
import { isPriced, leastWorstCaseMicros, worstCaseMicros } from './worst-case.ts';

export interface BillingDeps {
  readonly ledger: Ledger;
  readonly usage: UsageLog;
  readonly now: () => number;
  /** Serve priced routers without charging when the store is down (default: refuse with 503). */
  readonly failOpen: boolean;
  readonly reservationTtlMs: number;
  readonly log: FastifyBaseLogger;
}

/** What admission took, to be given back (or charged) at settlement. */
export interface Admitted {
  readonly reservation: Reservation | undefined;
  readonly ratePolicy: RateLimitPolicy | undefined;
  readonly rate: RateStatuses;
  /** The prompt tokens admission counted (an upper bound past the bounds of usage/tokens.ts); undefined when it needed no count. */
  readonly promptTokens: number | undefined;
}

/** How the request ended, for settlement and its usage record. */
export interface Settled {
  readonly status: number;
  readonly provider: string | null;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costMicros: bigint;
  readonly kWh: number;
  readonly kgCO2eq: number;
  readonly latencyMs: number;
  readonly ttftMs: number | null;
  readonly incomplete: boolean;
}

/**
 * Prompts of more characters than this are checked against the budget before they are counted
 * (an extra admission and release: two round trips on Redis, none while a lease has room):
 * counting them may take milliseconds, up to the bound in usage/tokens.ts.
 */
export const CHECK_BEFORE_COUNTING_CHARS = 16 * 1024;

const NOTHING: Admitted = { reservation: undefined, ratePolicy: undefined, rate: {}, promptTokens: undefined };

export class Billing {
  readonly #deps: BillingDeps;

  constructor(deps: BillingDeps) {
    this.#deps = deps;
  }

  /** Throws 402 (budget), 429 (rate limit) or 503 (store down on a priced router). */
  async admit(caller: Caller, router: RouterRoute, endpoint: Endpoint, body: JsonObject): Promise<Admitted> {
    const ratePolicy = caller.user.rate_limits ?? router.spec.rate_limits;
    const priced = isPriced(router) && caller.user.budget !== null;
    if (!priced && !ratePolicy) return NOTHING;
    const limitsTokens = ratePolicy?.tokens_per_minute !== undefined || ratePolicy?.tokens_per_day !== undefined;
    if (priced) await this.#checkBeforeCounting(caller, router, endpoint, body);
    // Counted only when a hold or a token limit needs it; kept for the usage block after. The
    // count is exact, or an upper bound past what one count may do (usage/tokens.ts).
    const count = priced || limitsTokens ? promptTokenCount(endpoint, body, new TokenCount()) : undefined;
    const promptTokens = count?.tokens;
    const reservation: Reservation | undefined = priced
      ? { id: randomId(), micros: worstCaseMicros(router, endpoint, body, count!.tokens, count!.fewest), ttlMs: this.#deps.reservationTtlMs }
      : undefined;
    const rate: RateCharge | undefined = ratePolicy ? { scope: router.spec.name, policy: ratePolicy, tokens: promptTokens ?? 0 } : undefined;
    let result;
    try {
      result = await this.#deps.ledger.admit(caller.user.id, { now: this.#deps.now(), reservation, rate });
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (priced && !this.#deps.failOpen) throw billingErrors.storeUnavailable();
      this.#deps.log.warn(`serving without budget or rate-limit accounting: ${error.message}`);
      return NOTHING;
    }
    if (result.ok) return { reservation, ratePolicy, rate: result.rate, promptTokens };
    switch (result.reason) {
      case 'budget':
        throw billingErrors.insufficientBudget(result.remainingMicros, reservation!.micros);
      case 'rate':
        throw billingErrors.rateLimited(result.limit, ratePolicy!, result.retryAfterMs, result.rate);
      case 'unknown_user':
        throw billingErrors.unknownUser();
    }
  }

  /**
   * A long prompt is checked against the budget before it is counted: refused with 402 when the
   * budget has no room even for the least hold it can come to (its count bounded by its length,
   * usage/tokens.ts TokenBounds). The room is asked for and given back at once, the ledger having
   * no other way to tell; shorter prompts skip this, their count costing less than the round trips.
   */
  async #checkBeforeCounting(caller: Caller, router: RouterRoute, endpoint: Endpoint, body: JsonObject): Promise<void> {
    const bounds = promptTokenCount(endpoint, body, new TokenBounds());
    if (bounds.chars <= CHECK_BEFORE_COUNTING_CHARS) return;
    const leastMicros = leastWorstCaseMicros(router, endpoint, body, bounds.fewest, bounds.most);
    const reservation: Reservation = { id: randomId(), micros: leastMicros, ttlMs: this.#deps.reservationTtlMs };
    const { ledger } = this.#deps;
    let result;
    try {
      result = await ledger.admit(caller.user.id, { now: this.#deps.now(), reservation });
      if (result.ok) await ledger.settle(caller.user.id, { now: this.#deps.now(), reservation, actualMicros: 0n });
    } catch (error) {
      // The admission after the count meets the same outage and answers it as configured.
      if (error instanceof StoreUnavailableError) return;
      throw error;
    }
    if (result.ok) return;
    if (result.reason === 'budget') throw billingErrors.insufficientBudget(result.remainingMicros, leastMicros);
    if (result.reason === 'unknown_user') throw billingErrors.unknownUser();
  }

  /**
   * Settles and records the request; never throws, never delays the caller. `admitted` is
   * undefined for requests refused before admission (they are only recorded).
   */
  settle(caller: Caller, router: RouterRoute | undefined, calledName: string, endpoint: Endpoint, admitted: Admitted | undefined, settled: Settled): void {
    const now = this.#deps.now();
    const charge = async (): Promise<bigint> => {
      // Without a hold or limits to settle, only a real cost needs writing (spent is kept for
      // unlimited users too, for reporting).
      if (!admitted?.reservation && !admitted?.ratePolicy && settled.costMicros === 0n) return 0n;
      const result = await this.#deps.ledger.settle(caller.user.id, {
        now,
        reservation: admitted?.reservation,
        actualMicros: settled.costMicros,
        rate: admitted?.ratePolicy && router ? { scope: router.spec.name, policy: admitted.ratePolicy, tokens: settled.completionTokens } : undefined,
      });
      return result.chargedMicros;
    };
    charge()
      .catch((error: unknown) => {
        // The hold expires by itself (reservation TTL); the record still says what was owed.
        this.#deps.log.error(`could not settle a request of user ${caller.user.id}: ${(error as Error).message}`);
        return settled.costMicros;
      })
      .then((charged) =>
        this.#deps.usage.append({
          id: randomId(),
          time: now,
          user_id: caller.user.id,
          key_id: caller.key.id,
          router: router?.spec.name ?? calledName,
          provider: settled.provider,
          endpoint,
          status: settled.status,
          prompt_tokens: settled.promptTokens,
          completion_tokens: settled.completionTokens,
          cost_micros: charged,
          kwh: settled.kWh,
          kgco2eq: settled.kgCO2eq,
          latency_ms: Math.round(settled.latencyMs * 10) / 10,
          ttft_ms: settled.ttftMs === null ? null : Math.round(settled.ttftMs * 10) / 10,
          incomplete: settled.incomplete,
        }),
      )
      .catch((error: unknown) => this.#deps.log.error(`could not record usage of user ${caller.user.id}: ${(error as Error).message}`));
  }
}

// Charges every request to its caller's budget and limits: admission holds the worst-case cost
// and takes the rate-limit share before anything is forwarded; settlement charges the real cost
// and releases the rest once the answer is over, whatever way it ended. Settlement and the usage
// record are written after the answer, so they never delay it.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { RateLimitPolicy } from '../../core/resources/limits.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import { levelsOf, type Caller } from '../accounts/caller.ts';
import type { KindLog } from '../observability/log-throttle.ts';
import type {
  AdmissionResult,
  BudgetStatus,
  LevelName,
  Ledger,
  OtherLevel,
  RateCharge,
  RateStatuses,
  Reservation,
} from '../../core/store/ledger.ts';
import type { UsageLog, UsageRecord } from '../../core/store/usage-log.ts';
import type { UsageLogs } from '../../core/telemetry/usage-logs.ts';
import type { Context } from '@opentelemetry/api';
import { StoreUnavailableError } from '../../core/store/store-errors.ts';
import { promptTokenCount } from './usage-block.ts';
import { countInSlices, SLICE_CHARS, TokenBounds, TokenCount } from '../metering/tokens.ts';
import {
  BudgetsUnavailableError,
  ContextLengthError,
  InsufficientBudgetError,
  RateLimitedError,
  UnknownUserError,
} from './billing-errors.ts';
import { randomId } from '../../core/ids.ts';
import {
  contextOverflow,
  heldPromptTokens,
  isPriced,
  leastAudioHoldMicros,
  learnable,
  leastWorstCaseMicros,
  promptBase,
  worstCaseMicros,
} from './worst-case.ts';
import type { PromptRatioLearner } from './prompt-ratio-learner.ts';
import type { PromptCounts } from './usage-block.ts';

/** Counted when a request cost more than its budget had room for, and when usage was not believed. */
export interface BillingMetrics {
  uncovered(router: string, micros: bigint): void;
  usageAnomaly(router: string, provider: string, kinds: string): void;
}

export interface BillingDeps {
  readonly ledger: Ledger;
  readonly usage: UsageLog;
  readonly now: () => number;
  /** Serve priced routers without charging when the store is down (default: refuse with 503). */
  readonly failOpen: boolean;
  readonly reservationTtlMs: number;
  /** Collapses repeated lines: during an outage every request would write its own. */
  readonly log: KindLog;
  /** Learns how far backends' prompt counts exceed the gateway's; holds read it. */
  readonly ratios: PromptRatioLearner;
  readonly metrics: BillingMetrics;
  /** Each usage record, once written, also sent as an OTLP log record (core/telemetry/usage-logs.ts), when that is on. */
  readonly usageLogs?: Pick<UsageLogs, 'emit'> | undefined;
}

/** What admission took, to be given back (or charged) at settlement. */
export interface Admitted extends PromptCounts {
  readonly reservation: Reservation | undefined;
  /** Whether a rate limit applies at any level: the completion's tokens are then counted at settlement. */
  readonly limited: boolean;
  readonly ratePolicy: RateLimitPolicy | undefined;
  /** The key's and team's levels it was held at. */
  readonly levels: readonly OtherLevel[] | undefined;
  readonly rate: RateStatuses;
  /** The budget with least room after the hold, for the x-tollgate-budget-* headers. */
  readonly budget: BudgetStatus | undefined;
}

/** How the request ended, for settlement and its usage record. */
export interface Settled {
  readonly status: number;
  readonly provider: string | null;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Of promptTokens, those charged as read from the backend's prompt cache. */
  readonly cachedTokens: number;
  /** Of promptTokens, those charged as written to the backend's prompt cache. */
  readonly cacheWriteTokens: number;
  /** Transcriptions: the seconds of audio charged for; 0 otherwise. */
  readonly audioSeconds: number;
  /** The real cost: the tokens (as believed, usage-block.ts) times the prices. */
  readonly costMicros: bigint;
  /** What in the usage was not believed (usage-block.ts), or null. */
  readonly usageAnomaly: string | null;
  /** The prompt tokens the backend reported, to learn the router's ratio from. */
  readonly reportedPrompt: number | undefined;
  readonly kWh: number;
  readonly kgCO2eq: number;
  readonly latencyMs: number;
  readonly ttftMs: number | null;
  readonly incomplete: boolean;
}

/** A request that is over, for settlement and its usage record. */
export interface EndedRequest {
  readonly caller: Caller;
  /** Undefined when the model named no router. */
  readonly router: RouterRoute | undefined;
  /** The model as the caller named it (the router's name, or what it sent when that named none). */
  readonly calledName: string;
  /** The router asked for, when another (a fallback) served the request. */
  readonly requestedRouter?: string | undefined;
  readonly endpoint: Endpoint;
  /** Undefined for a request refused before or at admission. */
  readonly admitted: Admitted | undefined;
  readonly settled: Settled;
  /** Hears what was charged, once settled (a trace's settlement span). */
  readonly onCharged?: ((chargedMicros: bigint) => void) | undefined;
  /** The request's trace, which its usage record's log record belongs to. */
  readonly traceContext?: Context | undefined;
}

/**
 * Prompts of more characters than this are checked against the budget before they are counted
 * (an extra admission and release: two round trips on Redis, none while a lease has room):
 * counting them may take milliseconds, up to the bound in usage/tokens.ts.
 */
export const CHECK_BEFORE_COUNTING_CHARS = 16 * 1024;

const NOTHING: Admitted = {
  reservation: undefined,
  limited: false,
  ratePolicy: undefined,
  levels: undefined,
  rate: {},
  budget: undefined,
  promptTokens: undefined,
  fewestPrompt: undefined,
  promptBase: undefined,
  heldPrompt: undefined,
};

export class Billing {
  readonly #deps: BillingDeps;

  constructor(deps: BillingDeps) {
    this.#deps = deps;
  }

  /**
   * Throws ContextLengthError, InsufficientBudgetError, RateLimitedError, UnknownUserError or
   * BudgetsUnavailableError (billing-errors.ts). `checkContext` counts the prompt even when
   * neither money nor limits need it, to refuse one too long for the router's context (so that a
   * fallback where it fits can take it).
   */
  async admit(caller: Caller, router: RouterRoute, endpoint: Endpoint, body: JsonObject, checkContext = false): Promise<Admitted> {
    const ratePolicy = caller.user.rate_limits ?? router.spec.rate_limits;
    const { levels, budgeted } = levelsOf(caller);
    const limited = ratePolicy !== undefined || levels?.some((l) => l.policy !== undefined) === true;
    const routerPriced = isPriced(router);
    const priced = routerPriced && (caller.user.budget !== null || budgeted);
    if (!routerPriced && !limited && !checkContext) return NOTHING;
    const limitsTokens = limitsTokensIn(ratePolicy) || levels?.some((l) => limitsTokensIn(l.policy)) === true;
    // Counted only when money, a token limit or the context check depends on it (for users
    // without a budget too: what they spend is reported, and their prompts teach the hold); kept
    // for the usage block. The count is exact, or an upper bound past what one count may do
    // (usage/tokens.ts). Bounded by its length first (a walk, nothing per character): a long
    // prompt is checked against the budget before it is counted, and counted a slice at a time.
    const bounds = routerPriced || limitsTokens || checkContext ? promptTokenCount(endpoint, body, new TokenBounds()) : undefined;
    if (priced) await this.#checkBeforeCounting(caller, router, endpoint, body, levels, bounds!);
    const counting = bounds === undefined ? undefined : counted(endpoint, body, bounds);
    // Awaited only when sliced: a short prompt's admission takes no extra turn of the microtask queue.
    const count = counting instanceof Promise ? await counting : counting;
    const promptTokens = count?.tokens;
    let base: number | undefined;
    let heldPrompt: number | undefined;
    if (count !== undefined) {
      // Refused only when sure not to fit: against the count's lower bound.
      const overflow = contextOverflow(router, endpoint, body, count.fewest);
      if (overflow) throw new ContextLengthError(endpoint, router.spec.max_context_length, overflow.prompt, overflow.completion);
      base = promptBase(endpoint, body, count.tokens);
      heldPrompt = heldPromptTokens(base, this.#deps.ratios.ratio(router.spec.name));
    }
    const reservation: Reservation | undefined = priced
      ? { id: randomId(), micros: worstCaseMicros(router, endpoint, body, heldPrompt!, count!.fewest), ttlMs: this.#deps.reservationTtlMs }
      : undefined;
    const counts = { promptTokens, fewestPrompt: count?.fewest, promptBase: base, heldPrompt };
    if (!priced && !limited) return { ...NOTHING, ...counts };
    const rate: RateCharge | undefined = limited ? { scope: router.spec.name, policy: ratePolicy, tokens: promptTokens ?? 0 } : undefined;
    let result: AdmissionResult;
    try {
      result = await this.#deps.ledger.admit(caller.user.id, { now: this.#deps.now(), reservation, rate, levels, team: caller.user.team });
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (priced && !this.#deps.failOpen) throw new BudgetsUnavailableError(error.message, { cause: error });
      this.#deps.log.warn('fail open', `serving without budget or rate-limit accounting: ${error.message}`);
      return { ...NOTHING, ...counts };
    }
    if (result.ok) return { reservation, limited, ratePolicy, levels, rate: result.rate, budget: result.budget, ...counts };
    switch (result.reason) {
      case 'budget':
        throw new InsufficientBudgetError(result.remainingMicros, reservation!.micros, result.level);
      case 'rate':
        throw new RateLimitedError(
          result.limit,
          policyAt(result.level, ratePolicy, levels)!,
          result.retryAfterMs,
          result.rate,
          result.level,
        );
      case 'unknown_user':
        throw new UnknownUserError(caller.user.id);
    }
  }

  /**
   * Refuses (InsufficientBudgetError) a caller whose budget has no room for the least a
   * transcription on `router` can hold, before its audio is read: reading it costs a scan
   * thread's time (seconds, for junk), which a caller who cannot pay for any transcription must
   * not take from those who can. The least is leastAudioHoldMicros (a millisecond of audio and a
   * transcript window), and at least one micro: a budget with no room at all is refused. A free
   * router, or a caller without a budget, passes.
   */
  async checkAudioRoom(caller: Caller, router: RouterRoute): Promise<void> {
    const { levels, budgeted } = levelsOf(caller);
    if (!isPriced(router) || (caller.user.budget === null && !budgeted)) return;
    const least = leastAudioHoldMicros(router);
    await this.#checkRoom(caller, levels, least > 0n ? least : 1n);
  }

  /**
   * A long prompt is checked against the budget before it is counted: refused (InsufficientBudgetError) when the
   * budget has no room even for the least hold it can come to (its count bounded by its length,
   * usage/tokens.ts TokenBounds). Shorter prompts skip this, their count costing less than the
   * round trips.
   */
  async #checkBeforeCounting(
    caller: Caller,
    router: RouterRoute,
    endpoint: Endpoint,
    body: JsonObject,
    levels: readonly OtherLevel[] | undefined,
    bounds: TokenBounds,
  ): Promise<void> {
    if (bounds.chars <= CHECK_BEFORE_COUNTING_CHARS) return;
    await this.#checkRoom(caller, levels, leastWorstCaseMicros(router, endpoint, body, bounds.fewest, bounds.most));
  }

  /**
   * Refuses (InsufficientBudgetError) when some budget of the caller has less room than `micros`.
   * The room is asked for and given back at once, the ledger having no other way to tell. A store
   * that does not answer is let be: the admission after meets the same outage and answers it as
   * configured.
   */
  async #checkRoom(caller: Caller, levels: readonly OtherLevel[] | undefined, micros: bigint): Promise<void> {
    const reservation: Reservation = { id: randomId(), micros, ttlMs: this.#deps.reservationTtlMs };
    const { ledger } = this.#deps;
    let result: AdmissionResult;
    try {
      result = await ledger.admit(caller.user.id, { now: this.#deps.now(), reservation, levels, team: caller.user.team });
      if (result.ok)
        await ledger.settle(caller.user.id, { now: this.#deps.now(), reservation, actualMicros: 0n, levels, team: caller.user.team });
    } catch (error) {
      if (error instanceof StoreUnavailableError) return;
      throw error;
    }
    if (result.ok) return;
    if (result.reason === 'budget') throw new InsufficientBudgetError(result.remainingMicros, micros, result.level);
    if (result.reason === 'unknown_user') throw new UnknownUserError(caller.user.id);
  }

  /**
   * Gives back what admission took for a router that did not serve the request (it fell back to
   * another): the hold is released whole and no usage is recorded; the request stays counted in
   * that router's request limits, as any request its providers failed. Never throws.
   */
  release(caller: Caller, admitted: Admitted): void {
    const { reservation, levels } = admitted;
    if (!reservation) return;
    this.#deps.ledger
      .settle(caller.user.id, { now: this.#deps.now(), reservation, actualMicros: 0n, levels, team: caller.user.team })
      .catch((error: unknown) =>
        // The hold expires by itself (reservation TTL).
        this.#deps.log.error('release failed', `could not release a hold of user ${caller.user.id}: ${(error as Error).message}`),
      );
  }

  /**
   * Settles the request against its hold and limits, then writes its usage record with what was
   * charged (and what was not covered); never throws, never delays the caller. A request refused
   * before admission has nothing to settle and is only recorded.
   */
  settleAndRecord(request: EndedRequest): void {
    const { caller, router, calledName, endpoint, admitted, settled, requestedRouter } = request;
    const now = this.#deps.now();
    const charge = async (): Promise<bigint> => {
      // Without a hold or limits to settle, only a real cost needs writing (spent is kept for
      // unlimited users too, for reporting).
      if (!admitted?.reservation && !admitted?.limited && settled.costMicros === 0n) return 0n;
      const result = await this.#deps.ledger.settle(caller.user.id, {
        now,
        reservation: admitted?.reservation,
        actualMicros: settled.costMicros,
        rate:
          admitted?.limited && router
            ? { scope: router.spec.name, policy: admitted.ratePolicy, tokens: settled.completionTokens }
            : undefined,
        levels: admitted?.levels ?? levelsOf(caller).levels,
        team: caller.user.team,
      });
      return result.chargedMicros;
    };
    const routerName = router?.spec.name ?? calledName;
    if (settled.usageAnomaly !== null) this.#anomaly(routerName, settled);
    const base = admitted?.promptBase;
    if (router && settled.reportedPrompt !== undefined && base !== undefined && learnable(settled.reportedPrompt, base))
      this.#deps.ratios.observe(routerName, settled.reportedPrompt, base);
    charge()
      .catch((error: unknown) => {
        // The hold expires by itself (reservation TTL); the record still says what was owed.
        this.#deps.log.error('settle failed', `could not settle a request of user ${caller.user.id}: ${(error as Error).message}`);
        return settled.costMicros;
      })
      .then((charged) => {
        // The budget had no room for all of it (the hold fell short, or expired): said, not hidden.
        const uncovered = settled.costMicros - charged;
        if (uncovered > 0n) this.#deps.metrics.uncovered(routerName, uncovered);
        request.onCharged?.(charged);
        const record: UsageRecord = {
          id: randomId(),
          time: now,
          user_id: caller.user.id,
          key_id: caller.key.id,
          team_id: caller.team?.id ?? null,
          router: routerName,
          requested_router: requestedRouter ?? routerName,
          provider: settled.provider,
          endpoint,
          status: settled.status,
          prompt_tokens: settled.promptTokens,
          completion_tokens: settled.completionTokens,
          cached_tokens: settled.cachedTokens,
          cache_write_tokens: settled.cacheWriteTokens,
          audio_seconds: settled.audioSeconds,
          cost_micros: settled.costMicros,
          charged_micros: charged,
          uncovered_micros: uncovered > 0n ? uncovered : 0n,
          usage_anomaly: settled.usageAnomaly,
          kwh: settled.kWh,
          kgco2eq: settled.kgCO2eq,
          latency_ms: Math.round(settled.latencyMs * 10) / 10,
          ttft_ms: settled.ttftMs === null ? null : Math.round(settled.ttftMs * 10) / 10,
          incomplete: settled.incomplete,
        };
        const usageLogs = this.#deps.usageLogs;
        if (usageLogs === undefined) return this.#deps.usage.append(record);
        return this.#deps.usage.append(record).then(() => usageLogs.emit(record, request.traceContext));
      })
      .catch((error: unknown) =>
        this.#deps.log.error('usage not recorded', `could not record usage of user ${caller.user.id}: ${(error as Error).message}`),
      );
  }

  /** Counts a usage report that was not believed, and logs it (collapsed per router, log-throttle.ts). */
  #anomaly(router: string, settled: Settled): void {
    this.#deps.metrics.usageAnomaly(router, settled.provider ?? '', settled.usageAnomaly!);
    this.#deps.log.warn(
      `usage not believed: ${router}`,
      `usage from provider ${settled.provider ?? '-'} of router ${router} not believed (${settled.usageAnomaly}): charged ${settled.promptTokens} prompt and ${settled.completionTokens} completion tokens instead`,
    );
  }
}

/**
 * The prompt's count: at once when short, else a slice at a time (tokens.ts countInSlices), so
 * that counting a long prompt (up to 1 Mi characters of it) does not hold the event loop.
 */
function counted(endpoint: Endpoint, body: JsonObject, bounds: TokenBounds): TokenCount | Promise<TokenCount> {
  if (bounds.chars <= SLICE_CHARS) return promptTokenCount(endpoint, body, new TokenCount());
  return countInSlices((sink) => promptTokenCount(endpoint, body, sink));
}

function limitsTokensIn(policy: RateLimitPolicy | undefined): boolean {
  return policy?.tokens_per_minute !== undefined || policy?.tokens_per_day !== undefined;
}

/** The rate limits of the level that refused. */
function policyAt(
  level: LevelName,
  user: RateLimitPolicy | undefined,
  levels: readonly OtherLevel[] | undefined,
): RateLimitPolicy | undefined {
  return level === 'user' ? user : levels?.find((l) => l.level === level)?.policy;
}

// Why admission refused a request, in billing's terms: what the budget, the limits or the model's
// context allow, and what the request asked. How a caller is told (status, message, headers) is
// decided in one place, gateway/pipeline/error-map.ts.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { RateLimitName, RateLimitPolicy } from '../../core/resources/limits.ts';
import type { LevelName, RateStatuses } from '../../core/store/ledger.ts';

/** A level's budget (the key's, the user's or the team's) has less room than the request's worst-case cost. */
export class InsufficientBudgetError extends Error {
  override name = 'InsufficientBudgetError';
  readonly remainingMicros: bigint;
  readonly neededMicros: bigint;
  readonly level: LevelName;

  constructor(remainingMicros: bigint, neededMicros: bigint, level: LevelName) {
    super(`the ${level} budget has ${remainingMicros} micros left, the request may cost up to ${neededMicros}`);
    this.remainingMicros = remainingMicros;
    this.neededMicros = neededMicros;
    this.level = level;
  }
}

/** One of the caller's rate limits (at the key's, the user's or the team's level) has no room left in its window. */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  readonly limit: RateLimitName;
  readonly policy: RateLimitPolicy;
  readonly retryAfterMs: number;
  /** Every limit's state after the refusal, for the x-ratelimit-* headers. */
  readonly rate: RateStatuses;
  readonly level: LevelName;

  constructor(limit: RateLimitName, policy: RateLimitPolicy, retryAfterMs: number, rate: RateStatuses, level: LevelName) {
    super(`${level} rate limit ${limit} (${policy[limit]}) reached; room again in ${retryAfterMs} ms`);
    this.limit = limit;
    this.policy = policy;
    this.retryAfterMs = retryAfterMs;
    this.rate = rate;
    this.level = level;
  }
}

/** The prompt plus the completion asked for cannot fit the router's context. */
export class ContextLengthError extends Error {
  override name = 'ContextLengthError';
  readonly endpoint: Endpoint;
  readonly context: number;
  readonly prompt: number;
  readonly completion: number;

  constructor(endpoint: Endpoint, context: number, prompt: number, completion: number) {
    super(`${prompt} prompt and ${completion} completion tokens do not fit a context of ${context}`);
    this.endpoint = endpoint;
    this.context = context;
    this.prompt = prompt;
    this.completion = completion;
  }
}

/** The store is down, so a priced request cannot be charged, and the gateway fails closed. */
export class BudgetsUnavailableError extends Error {
  override name = 'BudgetsUnavailableError';
}

/** The key's user was deleted after the key was looked up. */
export class UnknownUserError extends Error {
  override name = 'UnknownUserError';

  constructor(userId: string) {
    super(`user "${userId}" does not exist`);
  }
}

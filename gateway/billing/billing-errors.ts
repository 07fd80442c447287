// The refusals of budgets and rate limits, in OpenAI's envelope with the headers clients use.
import type { Endpoint } from '../resources/kinds.ts';
import type { RateLimitName, RateLimitPolicy } from '../resources/limits.ts';
import { RATE_WINDOWS } from '../resources/limits.ts';
import type { RateStatuses } from '../store/ledger.ts';
import { microsToDecimal } from '../usage/cost.ts';
import { ApiError } from '../http/api-error.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';

export const billingErrors = {
  insufficientBudget: (remainingMicros: bigint, neededMicros: bigint) =>
    new ApiError(
      402,
      'insufficient_quota',
      'insufficient_budget',
      `Insufficient budget: ${microsToDecimal(remainingMicros)} remaining, and this request may cost up to ${microsToDecimal(neededMicros)} (set a lower max_tokens to reserve less)`,
    ),
  rateLimited: (limit: RateLimitName, policy: RateLimitPolicy, retryAfterMs: number, rate: RateStatuses) => {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    const { unit, windowMs } = RATE_WINDOWS[limit];
    return new ApiError(
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
      `Rate limit reached: ${policy[limit]} ${unit} per ${windowMs === 60_000 ? 'minute' : 'day'} on this model; retry in ${seconds}s`,
      null,
      { 'retry-after': String(seconds), ...rateLimitHeaders(rate) },
    );
  },
  /** OpenAI's refusal of a request that cannot fit the model's context. */
  contextLengthExceeded: (endpoint: Endpoint, context: number, prompt: number, completion: number) =>
    new ApiError(
      400,
      'invalid_request_error',
      'context_length_exceeded',
      `This model's maximum context length is ${context} tokens. However, you requested ${prompt + completion} tokens (${prompt} in the ${endpoint === 'chat' ? 'messages' : 'prompt'}, ${completion} in the completion). Please reduce the length of the ${endpoint === 'chat' ? 'messages' : 'prompt'} or completion.`,
      endpoint === 'chat' ? 'messages' : 'prompt',
    ),
  storeUnavailable: () =>
    new ApiError(
      503,
      'server_error',
      'store_unavailable',
      'Budgets cannot be checked right now (the store is unavailable); try again shortly',
      null,
      { 'retry-after': '1' },
    ),
  unknownUser: () => new ApiError(401, 'authentication_error', 'invalid_api_key', 'The user of this API key no longer exists'),
  modelNotAllowed: () => new ApiError(403, 'permission_error', 'model_not_allowed', 'Your API key may not use this model', 'model'),
} as const;

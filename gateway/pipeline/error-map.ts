// The one place where the errors the gateway's parts throw become what a caller reads. Billing,
// routing, the store, the upstream client and the Kubernetes catalog throw errors of their own,
// in their own terms; each class listed here is safe to show, and is answered with its entry of
// the table of codes (api-error.ts): status, OpenAI envelope, headers. Anything not listed is internal
// (a bug): the caller gets `internal_error`, and the error itself only goes to the log.
import { RATE_WINDOWS } from '../../core/resources/limits.ts';
import { microsToDecimal } from '../metering/cost.ts';
import {
  BudgetsUnavailableError,
  ContextLengthError,
  InsufficientBudgetError,
  RateLimitedError,
  UnknownUserError,
} from '../billing/billing-errors.ts';
import {
  ModelTooBusyError,
  NoProviderForEndpointError,
  ProvidersFailedError,
  QueueUnavailableError,
  RequestRejectedError,
} from '../routing/routing-errors.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import {
  ConflictError,
  KeyLimitError,
  NotFoundError,
  ReplicasUnconfirmedError,
  StoreUnavailableError,
} from '../../core/store/store-errors.ts';
import { InvalidResourceError, KubernetesWriteError } from '../kubernetes/write-errors.ts';
import { ApiError, errors } from '../api/api-error.ts';
import { ScansBusyError, TooManyScansError } from '../endpoints/audio-probe.ts';
import { rateLimitHeaders } from '../api/rate-limit-headers.ts';
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';

/** What the caller is told of `error`, or undefined when it is internal and must not be shown. */
export function publicError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // Billing
  if (error instanceof InsufficientBudgetError)
    return errors.insufficientBudget(microsToDecimal(error.remainingMicros), microsToDecimal(error.neededMicros), error.level);
  if (error instanceof RateLimitedError) return rateLimited(error);
  if (error instanceof ContextLengthError)
    return errors.contextLengthExceeded(ENDPOINT_SPECS[error.endpoint].promptParam, error.context, error.prompt, error.completion);
  if (error instanceof BudgetsUnavailableError) return errors.budgetsUnavailable();
  if (error instanceof UnknownUserError) return errors.unknownUser();
  // Reading a transcription's audio
  if (error instanceof TooManyScansError) return errors.tooManyScans(error.limit);
  if (error instanceof ScansBusyError) return errors.audioScansBusy(error.waitedMs);
  // Routing and the upstream client
  if (error instanceof NoProviderForEndpointError) return errors.noProviderForEndpoint(error.router, error.path);
  if (error instanceof RequestRejectedError) return errors.upstreamRejected(error.cause.status, error.cause.message);
  if (error instanceof ProvidersFailedError) {
    if (error.timedOut) return errors.upstreamTimeout(error.router, error.attempts);
    return errors.upstreamFailed(error.router, error.attempts, error.last?.message ?? 'no provider could be tried', error.retryAfterMs);
  }
  if (error instanceof ModelTooBusyError) return errors.modelTooBusy(error.retryAfterSeconds);
  if (error instanceof QueueUnavailableError) return errors.routingUnavailable();
  if (error instanceof UpstreamError && error.failure === 'aborted') return errors.clientClosed();
  // The store and the Kubernetes catalog
  if (error instanceof ConflictError) return errors.conflict(error.message);
  if (error instanceof NotFoundError) return errors.notFound(error.message);
  if (error instanceof KeyLimitError) return errors.tooManyKeys(error.limit);
  if (error instanceof ReplicasUnconfirmedError) return error.written ? errors.storeUnconfirmed() : errors.storeBehind();
  if (error instanceof StoreUnavailableError) return errors.storeUnavailable();
  if (error instanceof InvalidResourceError) return errors.invalidRequest(error.message, error.param);
  if (error instanceof KubernetesWriteError) return errors.kubernetesError(error.message);
  return undefined;
}

/** The status a request that ended with `error` is recorded (and answered) with. */
export function statusOf(error: unknown): number {
  return (publicError(error) ?? errors.internal()).status;
}

/**
 * How a request ends when its provider fails after the answer started, or when the client goes
 * away: a stream broken off ends with this as its SSE error event (502 in the records); a client
 * gone is 499 (never read).
 */
export function streamEnding(failure: UpstreamError): ApiError {
  return failure.failure === 'aborted' ? errors.clientClosed() : errors.upstreamInterrupted(failure.message);
}

function rateLimited(error: RateLimitedError): ApiError {
  const { unit, windowMs } = RATE_WINDOWS[error.limit];
  const allowed = `${error.policy[error.limit]} ${unit} per ${windowMs === 60_000 ? 'minute' : 'day'}`;
  return errors.rateLimited(allowed, Math.max(1, Math.ceil(error.retryAfterMs / 1000)), rateLimitHeaders(error.rate), error.level);
}

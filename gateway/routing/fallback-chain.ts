// A routing policy: the router asked for, then its fallbacks in order, until one serves
// (docs/failure-handling.md). A router is left for the next when it cannot serve: its providers
// all failed before the first byte, are cooling down or unhealthy, it is too busy (queue mode),
// has no provider for the endpoint, or (context fallback) the request cannot fit its context.
// Each router is admitted on its own before anything is sent to it (the hold is its price, the
// rate limits its own) and the hold of a router left is given back. A fallback whose admission
// refuses the caller (budget, rate limit) is passed over; the router asked for never is.
// Admission is the caller's: handed in, so routing knows nothing of budgets.
import type { Forwarded } from './forwarder.ts';
import type { RouterRoute } from './routing-table.ts';
import { ModelTooBusyError, NoProviderForEndpointError, ProvidersFailedError, QueueUnavailableError } from './routing-errors.ts';

/** Why a request left a router for its next fallback (the metric's `reason`). */
export type FallbackReason = 'failed' | 'unavailable' | 'too_busy' | 'context';

/** How an admission's refusal counts for the chain. */
export type Refusal =
  /** The request does not fit the router's context. */
  | 'context'
  /** The caller's budget or rate limit refused it on this router. */
  | 'caller';

export interface ChainSteps<Admitted> {
  /** Admits the request on `router`; `overflowAllowed`: one too long for its context may go on to the next. */
  admit(router: RouterRoute, overflowAllowed: boolean): Promise<Admitted>;
  /** Gives back what `admit` held, when the router is left. */
  release(admitted: Admitted): void;
  /** Forwards to `router`'s providers; `onlyHealthy`: skip those not known healthy (a later router may serve). */
  forward(router: RouterRoute, admitted: Admitted, onlyHealthy: boolean): Promise<Forwarded>;
  /** What an error thrown by `admit` is, for the chain; undefined: it ends the request. */
  refusal(error: unknown): Refusal | undefined;
  /** The request went on from `from` to `to`. */
  fellBack(from: RouterRoute, to: RouterRoute, reason: FallbackReason): void;
  /** The router whose admission now holds (undefined: none), for settlement. */
  serving(router: RouterRoute | undefined, admitted: Admitted | undefined): void;
}

/**
 * Serves the request on `chain` (the router asked for first, then the fallbacks the caller may
 * use), given that no fallback starts past `deadline` on `clock`. What the caller is told when no
 * router serves: the last router's failure to serve, else a fallback's refusal at admission, else
 * the request's being too long for the router asked for.
 */
export async function serveWithFallbacks<Admitted>(
  chain: readonly RouterRoute[],
  contextFallback: boolean,
  deadline: number,
  clock: () => number,
  steps: ChainSteps<Admitted>,
): Promise<Forwarded> {
  let unserved: unknown;
  let refused: unknown;
  let tooLong: unknown;
  for (let i = 0; i < chain.length; i++) {
    const router = chain[i]!;
    const last = i === chain.length - 1;
    const next = chain[i + 1];
    // Past the deadline no fallback is started: the failure that led here is the answer.
    if (unserved !== undefined && clock() >= deadline) throw unserved;
    let admitted: Admitted;
    try {
      admitted = await steps.admit(router, contextFallback && !last);
    } catch (error) {
      const refusal = steps.refusal(error);
      // A fallback the request does not fit is passed over like one the caller cannot afford.
      const skippable = refusal === 'context' ? contextFallback || i > 0 : i > 0 && refusal === 'caller';
      if (!skippable) throw error;
      if (refusal === 'context') tooLong ??= error;
      else refused = error;
      if (next) {
        if (refusal === 'context' && unserved === undefined) steps.fellBack(router, next, 'context');
        continue;
      }
      throw unserved ?? refused ?? tooLong;
    }
    steps.serving(router, admitted);
    try {
      return await steps.forward(router, admitted, !last);
    } catch (error) {
      const reason = cannotServe(error);
      if (!reason || !next) throw error;
      steps.release(admitted);
      steps.serving(undefined, undefined);
      unserved = error;
      steps.fellBack(router, next, reason);
    }
  }
  // Not reached: the last router's failures are thrown above.
  throw unserved;
}

/** Why a router could not serve, when the request may go on to a fallback; undefined when not (the caller's fault, or it went away). */
function cannotServe(error: unknown): FallbackReason | undefined {
  if (error instanceof ProvidersFailedError) return error.attempts === 0 ? 'unavailable' : 'failed';
  if (error instanceof ModelTooBusyError) return 'too_busy';
  if (error instanceof NoProviderForEndpointError || error instanceof QueueUnavailableError) return 'unavailable';
  return undefined;
}

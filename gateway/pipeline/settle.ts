// The pipeline's last stage: however a request ends, it is metered (metrics) and settled (the
// charge and the usage record) exactly once, from the same usage the caller was told of.
import type { Endpoint } from '../../core/resources/kinds.ts';
import type { Caller } from '../accounts/caller.ts';
import type { Billing, Settled } from '../billing/billing.ts';
import type { Api } from '../wire/apis.ts';
import type { Usage } from '../billing/usage-block.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { Forwarded } from '../routing/forwarder.ts';
import type { RouterRoute } from '../routing/routing-table.ts';
import type { Call } from './inference-call.ts';
import type { OutcomeRecorder } from './request-outcome.ts';
import type { RequestTrace } from './request-trace.ts';

/** Where a request's ending goes. */
export interface Settlement {
  readonly outcomes: OutcomeRecorder;
  readonly billing: Billing;
}

/** How a forwarded request ended. */
export interface Ending {
  readonly status: number;
  readonly forwarded: Forwarded;
  readonly usage: Usage;
  readonly upstreamSeconds: number;
  readonly ttftMs: number | null;
  readonly incomplete: boolean;
  /** A stream's events that carried text. */
  readonly chunks?: number | undefined;
  /** The answer's text, for a trace that records content (asked for only then). */
  readonly output?: (() => string | undefined) | undefined;
}

/** A forwarded request is over: the provider's numbers, metrics, then settlement and the usage record. */
export function ended(call: Call, ending: Ending, to: Settlement): void {
  const totalSeconds = (performance.now() - call.startedAt) / 1000;
  const { usage, forwarded } = ending;
  forwarded.observe({
    ttftMs: ending.ttftMs ?? ending.upstreamSeconds * 1000,
    latencyMs: ending.upstreamSeconds * 1000,
    completionTokens: usage.block.completion_tokens,
  });
  to.outcomes.record({
    endpoint: call.endpoint,
    api: call.api,
    router: call.router,
    provider: forwarded.provider,
    status: ending.status,
    usage,
    totalSeconds,
    upstreamSeconds: ending.upstreamSeconds,
    ttftSeconds: ending.ttftMs === null ? undefined : ending.ttftMs / 1000,
    team: call.caller.team?.id,
  });
  const { trace } = call;
  trace?.ended({
    status: ending.status,
    router: call.router,
    provider: forwarded.provider,
    usage,
    ttftMs: ending.ttftMs,
    chunks: ending.chunks,
    output: ending.output,
  });
  to.billing.settleAndRecord({
    onCharged: trace?.settling(usage),
    traceContext: trace?.context,
    caller: call.caller,
    router: call.router,
    calledName: call.router.spec.name,
    requestedRouter: call.requested.spec.name,
    endpoint: call.endpoint,
    admitted: call.admitted,
    settled: settled({
      status: ending.status,
      provider: forwarded.provider.spec.id,
      usage,
      latencyMs: totalSeconds * 1000,
      ttftMs: ending.ttftMs,
      incomplete: ending.incomplete,
    }),
  });
}

/** A request that ended without an answer. */
export interface Refusal {
  readonly endpoint: Endpoint;
  readonly api: Api;
  /** The body as it came, for the model it named. */
  readonly body: unknown;
  readonly caller: Caller;
  /** Undefined when the model named no router. */
  readonly requested: RouterRoute | undefined;
  /** The router whose admission holds, if any: undefined when refused before or at admission. */
  readonly call: Call | undefined;
  readonly status: number;
  readonly startedAt: number;
  /** Why it ended so, for its trace. */
  readonly error?: unknown;
  readonly trace?: RequestTrace | undefined;
}

/** A request that ended without an answer: recorded, and its hold (if any) released. */
export function refused(refusal: Refusal, to: Settlement): void {
  const { endpoint, requested, call, status, api } = refusal;
  const router = call?.router ?? requested;
  const totalSeconds = (performance.now() - refusal.startedAt) / 1000;
  to.outcomes.record({ endpoint, api, router, provider: undefined, status, usage: undefined, totalSeconds, upstreamSeconds: undefined });
  const called = (refusal.body as JsonObject | null)?.model;
  const { trace } = refusal;
  trace?.ended({ status, router, error: refusal.error });
  to.billing.settleAndRecord({
    onCharged: trace?.settling(undefined),
    traceContext: trace?.context,
    caller: refusal.caller,
    router,
    calledName: typeof called === 'string' ? called.slice(0, 128) : '',
    requestedRouter: requested?.spec.name,
    endpoint,
    admitted: call?.admitted,
    settled: settled({ status, provider: null, usage: undefined, latencyMs: totalSeconds * 1000, ttftMs: null, incomplete: false }),
  });
}

/**
 * How a request ended, built once from the same usage the caller was told of: what is charged
 * and recorded is what the answer's usage block says.
 */
function settled(ending: {
  status: number;
  provider: string | null;
  usage: Usage | undefined;
  latencyMs: number;
  ttftMs: number | null;
  incomplete: boolean;
}): Settled {
  const { usage } = ending;
  return {
    status: ending.status,
    provider: ending.provider,
    promptTokens: usage?.block.prompt_tokens ?? 0,
    completionTokens: usage?.block.completion_tokens ?? 0,
    cachedTokens: usage?.cache.cached ?? 0,
    cacheWriteTokens: usage?.cache.writes ?? 0,
    audioSeconds: usage?.block.seconds ?? 0,
    costMicros: usage?.costMicros ?? 0n,
    usageAnomaly: usage?.anomaly ?? null,
    reportedPrompt: usage?.reportedPrompt,
    kWh: usage?.block.carbon.kWh ?? 0,
    kgCO2eq: usage?.block.carbon.kgCO2eq ?? 0,
    latencyMs: ending.latencyMs,
    ttftMs: ending.ttftMs,
    incomplete: ending.incomplete,
  };
}

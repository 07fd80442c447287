// A router worker's answer to a traced request, as a span of the request's own trace: the queue
// entry carried the traceparent of the request's wait (its tollgate.queue span), so the worker's
// decision shows under the wait it ended, whichever process made it. Only sampled requests carry
// one, so a worker records nothing for the others.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { TracedAnswer } from '../../core/store/routing-queue.ts';
import type { Tracing } from '../../core/telemetry/tracing.ts';
import { ATTR } from '../observability/trace-attributes.ts';

/** What a worker traces with: the tracer, and the W3C propagator to continue an entry's trace. */
export type AnswerTracing = Pick<Tracing, 'tracer' | 'extract'>;

/** One span per answer, from the pass's start (`startedAt`, ms since the epoch) to now. */
export function traceAnswers(
  tracing: AnswerTracing,
  router: string,
  worker: string,
  answers: readonly TracedAnswer[],
  startedAt: number,
): void {
  const endedAt = Date.now();
  for (const answer of answers) {
    const parent = tracing.extract({ traceparent: answer.traceparent });
    const span = tracing.tracer.startSpan(
      'tollgate.queue.answer',
      {
        kind: SpanKind.CONSUMER,
        startTime: startedAt,
        attributes: {
          [ATTR.router]: router,
          [ATTR.queueOutcome]: answer.outcome,
          [ATTR.queueWaitedMs]: answer.waitedMs,
          [ATTR.queueWorker]: worker,
          ...(answer.provider === undefined ? {} : { [ATTR.providerId]: answer.provider }),
        },
      },
      parent,
    );
    if (answer.outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: answer.outcome });
    span.end(endedAt);
  }
}

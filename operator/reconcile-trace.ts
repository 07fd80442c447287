// A reconcile as an OpenTelemetry span (`reconcile <kind>`), when the operator traces
// (docs/observability.md): its kind and work-queue key, and its error when it failed (the queue
// then retries it, each retry a span of its own).
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';

export async function tracedReconcile(tracer: Tracer, kind: string, key: string, run: () => Promise<void>): Promise<void> {
  const span = tracer.startSpan(`reconcile ${kind}`, {
    kind: SpanKind.INTERNAL,
    attributes: { 'tollgate.reconcile.kind': kind, 'tollgate.reconcile.key': key },
  });
  try {
    await run();
  } catch (error) {
    span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 500) : undefined });
    throw error;
  } finally {
    span.end();
  }
}

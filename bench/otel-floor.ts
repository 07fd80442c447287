// The OpenTelemetry SDK's own cost for the spans of one traced request, without the gateway: a
// loop that makes a non-streamed chat's span tree (the server span, authentication, admission,
// the attempt, settlement: the attributes the gateway gives them) through the tracing the gateway
// starts (core/telemetry/tracing.ts: the batch processor and the OTLP/HTTP protobuf exporter, to
// the sink), and between requests makes `churnKb` KB of short-lived objects, as a server does. It
// prints the CPU time per request with and without the spans: their difference is the least
// tracing every request can cost the gateway. Run by `npm run bench -- --tracing`, as
// `node bench/otel-floor.ts <otlp endpoint> <churn KB>`; prints one JSON line.
import { SpanKind, trace } from '@opentelemetry/api';
import { tracingFromEnv } from '../core/telemetry/otel-env.ts';
import { startTracing } from '../core/telemetry/tracing.ts';

const [endpoint, churnText] = process.argv.slice(2);
const churnKb = Number(churnText ?? 0);
const REQUESTS = 60_000;
const WARMUP = 20_000;

const settings = tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on' }, 'tollgate-bench-floor')!;
const tracing = await startTracing(settings, 'floor');
const { tracer } = tracing;

let kept: unknown[][] = [];
/** A request's own garbage: small objects and strings, a few kept a while (as a request's are until it ends). */
function churn(): void {
  const objects: unknown[] = [];
  for (let i = 0; i < churnKb * 8; i++) objects.push({ n: i, s: `v${i}`, a: [i, i + 1] });
  kept.push(objects);
  if (kept.length > 64) kept = [];
}

function spans(i: number): void {
  const headers = { traceparent: `00-${'0a'.repeat(16)}-${'0b'.repeat(8)}-01` };
  const parent = tracing.extract(headers);
  const caller = { 'tollgate.user.id': 'bench-full', 'tollgate.key.id': 'key-1', 'tollgate.team.id': 'bench-team' };
  const server = tracer.startSpan('chat', { kind: SpanKind.SERVER, attributes: { 'gen_ai.operation.name': 'chat' } }, parent);
  const context = trace.setSpan(parent, server);
  server.setAttributes({ 'tollgate.endpoint': 'chat', 'tollgate.api': 'openai', ...caller });
  tracer.startSpan('tollgate.authenticate', { attributes: caller }, context).end();
  server.updateName('chat bench-json');
  server.setAttributes({ 'gen_ai.request.model': 'bench-json', 'gen_ai.request.max_tokens': 16, 'gen_ai.request.stream': false });
  const admission = tracer.startSpan('tollgate.admission', { attributes: { 'tollgate.router': 'bench-json' } }, context);
  admission.setAttribute('tollgate.admission.levels', 'user,key,team');
  admission.end();
  const attempt = tracer.startSpan(
    'chat upstream-model',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'upstream-model',
        'gen_ai.provider.name': 'vllm',
        'tollgate.provider.id': 'bench-json-0',
        'server.address': '127.0.0.1',
        'server.port': 8000,
        'tollgate.replica': 'http://127.0.0.1:8000',
        'tollgate.router': 'bench-json',
        'tollgate.attempt': 1,
        'tollgate.retry': 0,
      },
    },
    context,
  );
  const sent: Record<string, string> = {};
  tracing.inject(trace.setSpan(context, attempt), sent);
  attempt.end();
  server.setAttributes({
    'http.response.status_code': 200,
    'gen_ai.response.model': 'bench-json',
    'tollgate.router': 'bench-json',
    'gen_ai.provider.name': 'vllm',
    'tollgate.provider.id': 'bench-json-0',
    'gen_ai.usage.input_tokens': 20 + (i & 7),
    'gen_ai.usage.output_tokens': 9,
  });
  const settle = tracer.startSpan(
    'tollgate.settle',
    { attributes: { 'tollgate.cost_micros': 290, 'tollgate.cost': 0.00029, 'tollgate.carbon.kwh': 1e-6, 'tollgate.carbon.kgco2eq': 4e-7 } },
    context,
  );
  server.end();
  settle.setAttribute('tollgate.charged_micros', 290);
  settle.end();
}

/** CPU µs per request over REQUESTS requests, the loop turning every 32 (exports and timers run then, as in a server). */
async function measure(traced: boolean): Promise<number> {
  const run = async (count: number) => {
    for (let i = 0; i < count; i++) {
      churn();
      if (traced) spans(i);
      if (i % 32 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await run(WARMUP);
  const before = process.cpuUsage();
  await run(REQUESTS);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / REQUESTS;
}

const without = await measure(false);
const withSpans = await measure(true);
await tracing.shutdown();
process.stdout.write(`${JSON.stringify({ churnKb, without, with: withSpans, spans: withSpans - without })}\n`);

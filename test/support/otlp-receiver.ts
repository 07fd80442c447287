// An OTLP/HTTP receiver on loopback, as a collector would be: it takes what an exporter POSTs to
// /v1/traces and /v1/logs in OTLP/JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), decodes it with
// a schema of the OTLP JSON encoding, and keeps the spans and log records, flattened, with their
// attributes and bodies as plain values.
// An export in protobuf (the default protocol) is kept as its bytes, not decoded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { eventually } from './eventually.ts';

const AnyValue: z.ZodType<unknown> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      intValue: z.union([z.string(), z.number()]).optional(),
      doubleValue: z.number().optional(),
      boolValue: z.boolean().optional(),
      arrayValue: z.object({ values: z.array(AnyValue).optional() }).optional(),
      kvlistValue: z.object({ values: z.array(z.object({ key: z.string(), value: AnyValue })).optional() }).optional(),
    })
    .transform((v): unknown => {
      if (v.stringValue !== undefined) return v.stringValue;
      if (v.intValue !== undefined) return Number(v.intValue);
      if (v.doubleValue !== undefined) return v.doubleValue;
      if (v.boolValue !== undefined) return v.boolValue;
      if (v.kvlistValue !== undefined) return Object.fromEntries((v.kvlistValue.values ?? []).map(({ key, value }) => [key, value]));
      return v.arrayValue?.values ?? null;
    }),
);
const KeyValues = z
  .array(z.object({ key: z.string(), value: AnyValue }))
  .optional()
  .transform((list) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, value])));

const SpanJson = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number(),
  startTimeUnixNano: z.union([z.string(), z.number()]),
  endTimeUnixNano: z.union([z.string(), z.number()]),
  attributes: KeyValues,
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
});

const ExportTraceServiceRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: KeyValues }).optional(),
      scopeSpans: z.array(
        z.object({ scope: z.object({ name: z.string(), version: z.string().optional() }).optional(), spans: z.array(SpanJson) }),
      ),
    }),
  ),
});

const LogRecordJson = z.object({
  timeUnixNano: z.union([z.string(), z.number()]).optional(),
  severityNumber: z.number().optional(),
  severityText: z.string().optional(),
  eventName: z.string().optional(),
  body: AnyValue.optional(),
  attributes: KeyValues,
  traceId: z.string().optional(),
  spanId: z.string().optional(),
});

const ExportLogsServiceRequest = z.object({
  resourceLogs: z.array(
    z.object({
      resource: z.object({ attributes: KeyValues }).optional(),
      scopeLogs: z.array(z.object({ scope: z.object({ name: z.string() }).optional(), logRecords: z.array(LogRecordJson) })),
    }),
  ),
});

/** A received log record; a null body when it had none. */
export interface ReceivedLog {
  readonly eventName: string | undefined;
  readonly timeNs: bigint | undefined;
  readonly severity: string | undefined;
  readonly body: unknown;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Empty when the record belongs to no trace. */
  readonly traceId: string;
  readonly spanId: string;
  readonly resource: Readonly<Record<string, unknown>>;
}

/** A received span; `kind` as OTLP numbers it (1 internal, 2 server, 3 client), `status` 2 for an error. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status: number;
  readonly resource: Readonly<Record<string, unknown>>;
  readonly scope: string | undefined;
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  readonly logs: readonly ReceivedLog[];
  /** Every export request's headers, as received. */
  readonly headers: readonly Record<string, string | string[] | undefined>[];
  /** Each export received in protobuf, as it came. */
  readonly protobuf: readonly Buffer[];
  /** The spans of `traceId`, once `count` of them have arrived (within what the batch delay promises). */
  trace(traceId: string, count: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  const protobuf: Buffer[] = [];
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      if (request.method !== 'POST' || (request.url !== '/v1/traces' && request.url !== '/v1/logs')) {
        response.writeHead(404).end();
        return;
      }
      headers.push(request.headers);
      if (request.headers['content-type'] === 'application/x-protobuf') {
        protobuf.push(Buffer.concat(parts));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      const json: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'));
      if (request.url === '/v1/logs') {
        const exported = ExportLogsServiceRequest.safeParse(json);
        if (!exported.success) {
          response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: exported.error.message }));
          return;
        }
        for (const { resource, scopeLogs } of exported.data.resourceLogs)
          for (const { logRecords } of scopeLogs)
            for (const record of logRecords)
              logs.push({
                eventName: record.eventName,
                timeNs: record.timeUnixNano === undefined ? undefined : BigInt(record.timeUnixNano),
                severity: record.severityText,
                body: record.body ?? null,
                attributes: record.attributes,
                traceId: record.traceId ?? '',
                spanId: record.spanId ?? '',
                resource: resource?.attributes ?? {},
              });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const parsed = ExportTraceServiceRequest.safeParse(json);
      if (!parsed.success) {
        response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: parsed.error.message }));
        return;
      }
      for (const { resource, scopeSpans } of parsed.data.resourceSpans)
        for (const { scope, spans: list } of scopeSpans)
          for (const span of list)
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              startNs: BigInt(span.startTimeUnixNano),
              endNs: BigInt(span.endTimeUnixNano),
              attributes: span.attributes,
              status: span.status?.code ?? 0,
              resource: resource?.attributes ?? {},
              scope: scope?.name,
            });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    logs,
    headers,
    protobuf,
    async trace(traceId, count) {
      // Spans leave in batches every OTEL_BSP_SCHEDULE_DELAY (the tests set 50 ms); the request's
      // last span (settlement's) ends once the charge is written: SETTLE_MS bounds both.
      await eventually(() => spans.filter((span) => span.traceId === traceId).length >= count, `${count} spans of trace ${traceId}`);
      return spans.filter((span) => span.traceId === traceId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

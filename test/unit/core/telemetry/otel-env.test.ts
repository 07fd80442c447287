// Tracing as the standard OpenTelemetry environment variables ask for it: off unless an OTLP
// endpoint is set, the endpoint, protocol, headers, resource and sampler read with the names and
// defaults of the specification, and a value that cannot be used refused at start-up, by name.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keyValues, logsFromEnv, tracingFromEnv } from '../../../../core/telemetry/otel-env.ts';
import { StartupError } from '../../../../core/startup-error.ts';

describe('tracing from the OTEL_* environment', () => {
  test('off without an endpoint, when the SDK is disabled, or when the traces exporter is none', () => {
    assert.equal(tracingFromEnv({}, 'tollgate-gateway'), undefined);
    assert.equal(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, 'g'), undefined);
    assert.equal(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, 'g'), undefined);
  });

  test('the base endpoint gets /v1/traces; the traces endpoint is used as it is', () => {
    assert.equal(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'g')?.url, 'http://collector:4318/v1/traces');
    assert.equal(
      tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' }, 'g')
        ?.url,
      'https://b/otlp/traces',
    );
  });

  test('the defaults of the specification', () => {
    const settings = tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'tollgate-gateway')!;
    assert.equal(settings.protocol, 'http/protobuf');
    assert.equal(settings.sampler, 'parentbased_always_on');
    assert.equal(settings.ratio, 1);
    assert.equal(settings.serviceName, 'tollgate-gateway');
    assert.deepEqual(settings.batch, { scheduledDelayMs: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMs: 30000 });
  });

  test("headers and resource attributes are URL-encoded pairs; the signal's own headers win; OTEL_SERVICE_NAME names the service", () => {
    const settings = tracingFromEnv(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x=1',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=2',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,k8s.namespace.name=ai',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      },
      'g',
    )!;
    assert.deepEqual(settings.headers, { 'api-key': 'a b', x: '2' });
    assert.equal(settings.serviceName, 'from-resource');
    assert.deepEqual(settings.resource, { 'k8s.namespace.name': 'ai' });
    assert.equal(settings.ratio, 0.25);
    assert.equal(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'gw-eu' }, 'g')?.serviceName, 'gw-eu');
  });

  test('what cannot be used stops the start, naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/],
      [{ OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER/],
      [{ OTEL_TRACES_SAMPLER_ARG: '2' }, /OTEL_TRACES_SAMPLER_ARG: "2" is not a ratio/],
      [{ OTEL_BSP_SCHEDULE_DELAY: 'soon' }, /OTEL_BSP_SCHEDULE_DELAY/],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, /OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value/],
      [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER/],
      [
        { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes' },
        /OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "yes" is not true or false/,
      ],
      [
        { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', TOLLGATE_TRACE_CONTENT_MAX_CHARS: '100000' },
        /TOLLGATE_TRACE_CONTENT_MAX_CHARS: "100000" is not a whole number from 1 to 65536/,
      ],
    ];
    for (const [env, message] of cases)
      assert.throws(
        () => tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', ...env }, 'g'),
        (error: unknown) => error instanceof StartupError && message.test(error.message),
      );
    assert.throws(() => tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' }, 'g'), /only http and https/);
    assert.throws(() => tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'g'), /is not a URL/);
  });

  test('prompts and answers are recorded only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, 4096 characters each unless told', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    assert.equal(tracingFromEnv(base, 'g')?.content, undefined);
    assert.equal(tracingFromEnv({ ...base, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' }, 'g')?.content, undefined);
    assert.deepEqual(tracingFromEnv({ ...base, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE' }, 'g')?.content, {
      maxChars: 4096,
    });
    assert.deepEqual(
      tracingFromEnv({ ...base, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', TOLLGATE_TRACE_CONTENT_MAX_CHARS: '500' }, 'g')
        ?.content,
      { maxChars: 500 },
    );
  });

  test('key=value lists tolerate blanks and keep = in values', () => {
    assert.deepEqual(keyValues(' a = 1 , ,b=x=y', 'V'), { a: '1', b: 'x=y' });
  });

  test('usage records go as logs only when OTEL_LOGS_EXPORTER=otlp says so, to the logs endpoint, with their own protocol and batch settings', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    assert.equal(logsFromEnv(endpoint, 'g'), undefined, 'an endpoint alone sends traces, not usage');
    const settings = logsFromEnv(
      { ...endpoint, OTEL_LOGS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json', OTEL_BLRP_SCHEDULE_DELAY: '200' },
      'g',
    )!;
    assert.equal(settings.url, 'http://c:4318/v1/logs');
    assert.equal(settings.protocol, 'http/json');
    assert.equal(settings.batch.scheduledDelayMs, 200);
    assert.equal(
      tracingFromEnv({ ...endpoint, OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json' }, 'g')?.protocol,
      'http/protobuf',
      "the logs' protocol is theirs alone",
    );
    assert.equal(logsFromEnv({ ...endpoint, OTEL_LOGS_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, 'g'), undefined);
    assert.throws(() => logsFromEnv({ OTEL_LOGS_EXPORTER: 'otlp' }, 'g'), /needs an endpoint/);
    assert.throws(() => logsFromEnv({ ...endpoint, OTEL_LOGS_EXPORTER: 'console' }, 'g'), /OTEL_LOGS_EXPORTER: "console" is not supported/);
  });
});

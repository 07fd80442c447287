// Reading a vLLM server's /metrics text (gateway/routing/engine/vllm-metrics.ts over
// sample-scanner.ts and prometheus-text.ts): real exposition text of both vLLM generations, summed
// over label sets, the same however it is cut into pieces, read no further than needed, and every
// kind of bad text refused as a whole (an outcome, never a throw).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSamples } from '../../../gateway/routing/engine/sample-scanner.ts';
import { readVllmMetrics, vllmLoad, vllmScanner } from '../../../gateway/routing/engine/vllm-metrics.ts';

/** What a vLLM V1 server (0.9 and later) serves, trimmed: comments, labels, histograms, _created series. */
const VLLM_V1 = `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 12345.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.4375
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 102400.0
vllm:prefix_cache_queries_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7328e+09
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 81920.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 42.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} NaN
`;

/** What a vLLM V0 server (before 0.9) serves: the KV cache named after the GPU, no prefix counters; two models. */
const VLLM_V0 = `# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a"} 2.0
vllm:num_requests_running{model_name="b"} 1.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="a"} 4.0
vllm:num_requests_waiting{model_name="b"} 5.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="a"} 0.25
vllm:gpu_cache_usage_perc{model_name="b"} 0.75
`;

test('a vLLM V1 text gives waiting, running, KV use and the prefix counters; other series and NaN elsewhere are ignored', () => {
  assert.deepEqual(readVllmMetrics(VLLM_V1), {
    ok: true,
    load: { waiting: 3, running: 7, kvCacheUsage: 0.4375, prefixQueries: 102400, prefixHits: 81920 },
  });
});

test("a vLLM V0 text: the older KV name, counts summed over the models, the KV use the fullest model's", () => {
  assert.deepEqual(readVllmMetrics(VLLM_V0), { ok: true, load: { waiting: 9, running: 3, kvCacheUsage: 0.75 } });
});

test('the newer KV name wins when both are present', () => {
  const both = `vllm:kv_cache_usage_perc 0.5\nvllm:gpu_cache_usage_perc 0.9\nvllm:num_requests_waiting 0\n`;
  assert.deepEqual(readVllmMetrics(both), { ok: true, load: { waiting: 0, kvCacheUsage: 0.5 } });
});

test('labels with escaped quotes, commas and braces, a timestamp, CRLF and a trailing comma are read', () => {
  const text =
    'vllm:num_requests_waiting{model_name="a \\"b\\", {c}\\\\",engine="0",} 2 1700000000000\r\nvllm:num_requests_running 1e1\r\n# EOF\r\n';
  assert.deepEqual(readVllmMetrics(text), { ok: true, load: { waiting: 2, running: 10 } });
});

test('only the wanted names are kept', () => {
  const parsed = parseSamples(VLLM_V1, new Set(['vllm:num_requests_running']));
  assert.ok(parsed.ok);
  assert.deepEqual([...parsed.samples], [['vllm:num_requests_running', [7]]]);
});

test('read in pieces of any size (split anywhere, CRLF included), a text gives what it gives whole', () => {
  for (const text of [VLLM_V1, VLLM_V0, VLLM_V1.replaceAll('\n', '\r\n')]) {
    const bytes = Buffer.from(text);
    const whole = readVllmMetrics(text);
    for (const size of [1, 2, 3, 7, 16, 61, 200]) {
      const scanner = vllmScanner();
      for (let at = 0; at < bytes.length && !scanner.done; at += size) scanner.push(bytes.subarray(at, at + size));
      assert.deepEqual(vllmLoad(scanner.end()), whole, `pieces of ${size} bytes`);
    }
  }
});

test('reading stops once the series read are all in: what follows is not looked at', () => {
  const scanner = vllmScanner();
  scanner.push(Buffer.from(`${VLLM_V1}this line would refuse the text\n`));
  assert.equal(scanner.done, true);
  assert.deepEqual(vllmLoad(scanner.end()), readVllmMetrics(VLLM_V1));
  // Read up to the line after the last series read (the hits' group ends there), no further.
  assert.equal(scanner.count.samples, 5);
  assert.ok(scanner.count.lines < VLLM_V1.split('\n').length);
});

test("comment lines and other metrics' lines of any length are passed over, a wanted line past the bound refuses the text", () => {
  const long = `# ${'x'.repeat(200_000)}\nother_metric{a="${'y'.repeat(200_000)}"} 1\nvllm:num_requests_waiting 4\n`;
  const scanner = vllmScanner({ maxSamples: 10, maxLineBytes: 1024 });
  const bytes = Buffer.from(long);
  for (let at = 0; at < bytes.length; at += 4096) scanner.push(bytes.subarray(at, at + 4096));
  assert.deepEqual(vllmLoad(scanner.end()), { ok: true, load: { waiting: 4 } });
  const wanted = vllmScanner({ maxSamples: 10, maxLineBytes: 1024 });
  const line = Buffer.from(`vllm:num_requests_waiting{m="${'z'.repeat(4096)}"} 4\n`);
  for (let at = 0; at < line.length; at += 512) wanted.push(line.subarray(at, at + 512));
  assert.match(JSON.stringify(vllmLoad(wanted.end())), /longer than 1024 bytes/);
});

const BAD: [string, string, RegExp][] = [
  ['garbage', '<html><body>Bad gateway</body></html>', /line 1: not a metric name/],
  ['a name without a value', 'vllm:num_requests_waiting\n', /no value/],
  ['a value that is not a number', 'vllm:num_requests_waiting abc\n', /not a number: abc/],
  ['unterminated labels', 'vllm:num_requests_waiting{model_name="a 3\n', /malformed labels/],
  ['a label without quotes', 'vllm:num_requests_waiting{model_name=a} 3\n', /malformed labels/],
  ['text after the timestamp', 'vllm:num_requests_waiting 3 17 extra\n', /trailing text/],
  ['NaN in a wanted gauge', 'vllm:num_requests_waiting NaN\n', /vllm:num_requests_waiting is NaN/],
  ['an infinite count', 'vllm:num_requests_running +Inf\n', /is Infinity/],
  ['a negative count', 'vllm:num_requests_waiting -1\n', /is -1/],
  ['a KV share past 1', 'vllm:kv_cache_usage_perc 1.5\n', /past 1/],
  ['a huge queue', 'vllm:num_requests_waiting 1e12\n', /past 1000000/],
  ['no vLLM load metric at all', 'process_cpu_seconds_total 12\n', /no vLLM load metrics/],
  ['an empty text', '', /no vLLM load metrics/],
];

for (const [what, text, error] of BAD) {
  test(`bad text is refused whole: ${what}`, () => {
    const read = readVllmMetrics(text);
    assert.equal(read.ok, false);
    assert.match(read.ok ? '' : read.error, error);
  });
}

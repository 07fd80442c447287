// GET /metrics: the engine's state in the Prometheus text format, with the names, HELP texts,
// types and labels vLLM's PrometheusStatLogger registers (vllm/v1/metrics/loggers.py), as
// prometheus_client writes them: counters named with `_total` and a `_created` sample, values as
// Python floats (3.0), labels model_name then engine. Only the metrics routing reads are emitted, plus
// the token counters a bench reads throughput from.
import type { EngineState, EngineTotals } from './engine.ts';

export interface MetricsView {
  readonly model: string;
  readonly legacyNames: boolean;
  /** Seconds since the epoch when the counters started (their `_created` sample). */
  readonly createdSeconds: number;
  readonly state: EngineState;
  readonly totals: EngineTotals;
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly value: number;
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function metricsText(view: MetricsView): string {
  const families: Family[] = [
    { name: 'vllm:num_requests_running', help: 'Number of requests in model execution batches.', type: 'gauge', value: view.state.running },
    { name: 'vllm:num_requests_waiting', help: 'Number of requests waiting to be processed.', type: 'gauge', value: view.state.waiting },
    view.legacyNames
      ? {
          name: 'vllm:gpu_cache_usage_perc',
          help: 'GPU KV-cache usage. 1 means 100 percent usage.',
          type: 'gauge',
          value: view.state.kvUsage,
        }
      : { name: 'vllm:kv_cache_usage_perc', help: 'KV-cache usage. 1 means 100 percent usage.', type: 'gauge', value: view.state.kvUsage },
    {
      name: 'vllm:prefix_cache_queries',
      help: 'Prefix cache queries, in terms of number of queried tokens.',
      type: 'counter',
      value: view.totals.promptTokens,
    },
    {
      name: 'vllm:prefix_cache_hits',
      help: 'Prefix cache hits, in terms of number of cached tokens.',
      type: 'counter',
      value: view.totals.cachedPromptTokens,
    },
    { name: 'vllm:prompt_tokens', help: 'Number of prefill tokens processed.', type: 'counter', value: view.totals.promptTokens },
    {
      name: 'vllm:generation_tokens',
      help: 'Number of generation tokens processed.',
      type: 'counter',
      value: view.totals.generationTokens,
    },
  ];
  const labels = `{model_name="${escapeLabel(view.model)}",engine="0"}`;
  let text = '';
  for (const family of families) {
    const name = family.type === 'counter' ? `${family.name}_total` : family.name;
    text += `# HELP ${name} ${family.help}\n# TYPE ${name} ${family.type}\n${name}${labels} ${pythonFloat(family.value)}\n`;
    if (family.type === 'counter') text += `${family.name}_created${labels} ${pythonFloat(view.createdSeconds)}\n`;
  }
  return text;
}

/** As the exposition format asks: backslash, double quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

/** A value as prometheus_client writes a Python float: whole numbers with `.0` (3.0), others as JavaScript prints them. */
function pythonFloat(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? `${value}.0` : String(value);
}

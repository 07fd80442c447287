// What routing reads of a vLLM server's /metrics text: requests waiting and running, the KV
// cache's use (named `vllm:kv_cache_usage_perc` since vLLM V1, `vllm:gpu_cache_usage_perc`
// before) and the prefix-cache counters where the engine has them. A server serving several
// models, or several engines (data parallel), reports one label set each: counts are summed over
// them, the KV cache's use (a share, which does not add up) is the fullest one's. A value that is
// not a plausible number (NaN, infinite, negative, a share past 1, a count past any real queue)
// refuses the whole text: no signals rather than wrong ones.
import type { EngineLoad } from '../../../core/store/engine-signals.ts';
import { type ParsedSamples, SampleScanner, type ScanLimits } from './sample-scanner.ts';

export type VllmRead = { readonly ok: true; readonly load: EngineLoad } | { readonly ok: false; readonly error: string };

/** Each number's metric names, preferred first: the first one present is read. */
const NAMES = {
  waiting: ['vllm:num_requests_waiting'],
  running: ['vllm:num_requests_running'],
  kvCacheUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  prefixQueries: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  prefixHits: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
} as const satisfies Record<keyof EngineLoad, readonly string[]>;

const WANTED: ReadonlySet<string> = new Set(Object.values(NAMES).flat());

/**
 * The preferred name of each number: once each one's lines were read, nothing later in the text
 * can change what is read (an older name is only read when the newer is absent), so reading
 * stops. An engine without one of them (no prefix cache counters) is read to its end.
 */
const ENOUGH: ReadonlySet<string> = new Set(Object.values(NAMES).map((names) => names[0]));

/** More requests than any engine holds: a number past it is garbage. */
const MOST_REQUESTS = 1_000_000;

/** A scanner of a /metrics answer for what routing reads of it, to be fed as it arrives. */
export function vllmScanner(limits?: ScanLimits): SampleScanner {
  return new SampleScanner(WANTED, ENOUGH, limits);
}

/** Reads `text` (a whole /metrics answer); never throws. */
export function readVllmMetrics(text: string): VllmRead {
  const scanner = vllmScanner();
  scanner.push(Buffer.from(text));
  return vllmLoad(scanner.end());
}

/** The load in what a scanner read; never throws. */
export function vllmLoad(parsed: ParsedSamples): VllmRead {
  if (!parsed.ok) return parsed;
  const first = (names: readonly string[]) => names.map((name) => ({ name, values: parsed.samples.get(name) })).find((m) => m.values);
  const load: Record<string, number | undefined> = {};
  for (const [field, names] of Object.entries(NAMES) as [keyof EngineLoad, readonly string[]][]) {
    const metric = first(names);
    if (!metric?.values) continue;
    const bad = metric.values.find((value) => !Number.isFinite(value) || value < 0);
    if (bad !== undefined) return { ok: false, error: `${metric.name} is ${bad}` };
    const value = metric.values.reduce((acc, v) => (field === 'kvCacheUsage' ? Math.max(acc, v) : acc + v), 0);
    const most = field === 'kvCacheUsage' ? 1 : field === 'waiting' || field === 'running' ? MOST_REQUESTS : Number.MAX_SAFE_INTEGER;
    if (value > most) return { ok: false, error: `${metric.name} is ${value}, past ${most}` };
    load[field] = value;
  }
  if (load.waiting === undefined && load.running === undefined && load.kvCacheUsage === undefined)
    return { ok: false, error: 'no vLLM load metrics (vllm:num_requests_waiting, vllm:num_requests_running, vllm:kv_cache_usage_perc)' };
  return { ok: true, load };
}

// /metrics texts a hostile or broken vLLM could serve (finding 13): about 1 MB of comment lines,
// or of label sets of a metric routing does not read, around the series it does read; or 20,000
// label sets of a series it reads. For the scrape's tests and its cost's measure
// (bench/engines/scrape-hostile.ts).

/** The series routing reads, one label set each: waiting 3, running 2, KV cache 0.25, prefix 1000 queries and 250 hits. */
export const READ_SERIES = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m",engine="0"} 2.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m",engine="0"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m",engine="0"} 0.25
# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{model_name="m",engine="0"} 1000.0
vllm:prefix_cache_queries_created{model_name="m",engine="0"} 1.7e9
# HELP vllm:prefix_cache_hits Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{model_name="m",engine="0"} 250.0
vllm:prefix_cache_hits_created{model_name="m",engine="0"} 1.7e9
`;

/** What READ_SERIES says. */
export const READ_LOAD = { waiting: 3, running: 2, kvCacheUsage: 0.25, prefixQueries: 1000, prefixHits: 250 };

/** `count` comment lines of about 100 bytes (10,000 of them: about 1 MB). */
export function commentLines(count: number): string {
  return `# ${'#'.repeat(97)}\n`.repeat(count);
}

/** `count` label sets of a histogram routing does not read, as vLLM writes them (20,000 of them: about 900 kB). */
export function otherLabelSets(count: number): string {
  let text = '# TYPE vllm:request_prompt_tokens histogram\n';
  for (let i = 0; i < count; i++) text += `vllm:request_prompt_tokens_bucket{le="${i}"} ${i}\n`;
  return text;
}

/** `count` label sets of vllm:num_requests_waiting, 1 request each. */
export function readLabelSets(count: number): string {
  let text = '# TYPE vllm:num_requests_waiting gauge\n';
  for (let i = 0; i < count; i++) text += `vllm:num_requests_waiting{engine="${i}"} 1\n`;
  return text;
}

/** The hostile texts, by what they hold. */
export function hostileTexts(): Record<string, string> {
  return {
    'the series read, then 1 MB of comments': READ_SERIES + commentLines(10_000),
    '500 kB of comments, 10,000 other label sets, then the series read': commentLines(5_000) + otherLabelSets(10_000) + READ_SERIES,
    '20,000 other label sets, then the series read': otherLabelSets(20_000) + READ_SERIES,
    '20,000 label sets of a series read': readLabelSets(20_000),
  };
}

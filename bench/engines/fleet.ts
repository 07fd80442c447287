// The system under test of the engines benchmark: emulated vLLM replicas (test/support/
// vllm-emulator, each its own process) and one gateway in file mode whose one router's `vllm`
// provider lists every replica (`args.api_urls`), with the contender's strategy. A fresh fleet is
// started for every rate and contender, so that no contender inherits another's warm caches or
// prefix index; and the replicas' prefix-cache counters are read from their /metrics.
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { gatewayArgs, startPinned, stop, type Child } from '../processes.ts';
import { freePort } from '../system.ts';
import { MODEL } from './workload.ts';

/** The emulated engine: settings of test/support/vllm-emulator/settings.ts, as flags. */
export interface EngineShape {
  readonly replicas: number;
  readonly kvBlocks: number;
  readonly timeScale: number;
}

export type Strategy = 'least_busy' | 'prefix_affinity';

export interface Contender {
  readonly strategy: Strategy;
  readonly label: string;
  /** Engine signals read from each replica's /metrics, ms between scrapes; 0: not read (today's gateway). */
  readonly scrapeIntervalMs: number;
}

export interface Fleet {
  readonly gatewayUrl: string;
  readonly gateway: Child;
  readonly engines: readonly { readonly url: string; readonly child: Child }[];
  stop(): Promise<void>;
}

export interface FleetOptions {
  readonly root: string;
  readonly node: string;
  readonly scratch: string;
  readonly name: string;
  readonly engine: EngineShape;
  readonly contender: Contender;
  readonly key: string;
  /** The bootstrap admin key, for the routing view (GET /v1/admin/routing) the step traces. */
  readonly adminKey: string;
  readonly gatewayCore: number;
  readonly engineCore: number;
  readonly redisUrl?: string | undefined;
  readonly waitReady: (url: string, child: Child) => Promise<void>;
}

/** Starts the replicas, then the gateway in front of them; both ready when it returns. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { root, node, scratch, name, engine } = options;
  const engines: { url: string; child: Child }[] = [];
  for (let i = 0; i < engine.replicas; i++) {
    const port = await freePort();
    const child = startPinned(
      `vllm emulator ${i}`,
      options.engineCore,
      node,
      [
        join(root, 'test/support/vllm-emulator/main.ts'),
        ...['--port', String(port), '--kv-blocks', String(engine.kvBlocks), '--time-scale', String(engine.timeScale)],
        ...['--prompt-tokens-details', 'true'],
      ],
      join(scratch, `${name}-engine-${i}.log`),
    );
    engines.push({ url: `http://127.0.0.1:${port}`, child });
  }
  for (const { url, child } of engines) await options.waitReady(`${url}/health`, child);
  const config = join(scratch, `${name}-gateway.yaml`);
  await writeFile(
    config,
    gatewayConfig(
      options.contender.strategy,
      engines.map((e) => e.url),
    ),
  );
  const port = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    TOLLGATE_BENCH_ENGINES_KEY: options.key,
    TOLLGATE_ADMIN_KEY: options.adminKey,
    TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS: String(options.contender.scrapeIntervalMs),
  };
  const gateway = startPinned(
    'gateway',
    options.gatewayCore,
    node,
    gatewayArgs(root, config, port, options.redisUrl),
    join(scratch, `${name}-gateway.log`),
    env,
  );
  const gatewayUrl = `http://127.0.0.1:${port}`;
  await options.waitReady(`${gatewayUrl}/readyz`, gateway);
  return {
    gatewayUrl,
    gateway,
    engines,
    async stop() {
      await stop(gateway);
      await Promise.all(engines.map((e) => stop(e.child)));
    },
  };
}

/** The prefix-cache counters of the replicas together: tokens looked up and tokens found cached. */
export interface PrefixCounters {
  readonly queries: number;
  readonly hits: number;
}

/** Sums vllm:prefix_cache_queries_total and _hits_total over the replicas' /metrics. */
export async function prefixCounters(fleet: Fleet): Promise<PrefixCounters> {
  let queries = 0;
  let hits = 0;
  for (const { url } of fleet.engines) {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    queries += sample(text, 'vllm:prefix_cache_queries_total');
    hits += sample(text, 'vllm:prefix_cache_hits_total');
  }
  return { queries, hits };
}

function sample(text: string, metric: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{`) || l.startsWith(`${metric} `));
  if (line === undefined) throw new Error(`the emulator's /metrics has no ${metric}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/**
 * One user without budget or limits (the request path without the money features: their CPU
 * would only shrink the share the routing's cost is of it), one router with the contender's
 * strategy, one `vllm` provider standing for every replica; its timeout long enough for the
 * queues past saturation.
 */
function gatewayConfig(strategy: Strategy, urls: readonly string[]): string {
  return `# Generated by bench/engines/fleet.ts
users:
  - id: bench-engines
    name: Benchmark, engines
    keys:
      - name: bench
        key: \${TOLLGATE_BENCH_ENGINES_KEY}
models:
  - id: ${MODEL}
    type: text-generation
    load_balancing_strategy: ${strategy}
    costs: { prompt_tokens: 0.10, completion_tokens: 0.20 }
    providers:
      - model: meta-llama/Llama-3.1-8B-Instruct
        type: vllm
        args:
          api_urls: [${urls.join(', ')}]
          timeout: 600
`;
}

// `npm run bench -- --engines` (issue 28): engine-aware, prefix-cache-aware routing against
// today's least_busy, on emulated vLLM replicas (test/support/vllm-emulator) whose small KV
// caches a shared-prompt workload (workload.ts) fills. For each offered rate of a ladder from
// light to past saturation, and each contender, a fresh fleet (fleet.ts) receives the same seeded
// open-loop sequence of streamed requests; the figures (report.ts) go to the top of
// bench/RESULTS.md. See bench/README.md, "Engine-aware routing".
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stopAll } from '../processes.ts';
import { prependSection } from '../report.ts';
import { positive, type BenchHelpers } from '../run-shape.ts';
import { describeMachine, which } from '../system.ts';
import type { Contender, EngineShape } from './fleet.ts';
import { cpuLines, goalLines, type Step, table } from './report.ts';
import { runStep, type StepContext } from './step.ts';
import type { WorkloadShape } from './workload.ts';

/** Offered rates (requests per wall-clock second), light to past saturation; BENCH_ENGINES_RATES="a,b,c" changes them. */
const DEFAULT_RATES = [1, 4, 7, 10, 13];

const SETTINGS = {
  warmupSeconds: positive('BENCH_ENGINES_WARMUP_SECONDS', 20),
  seconds: positive('BENCH_ENGINES_SECONDS', 30),
  scrapeIntervalMs: positive('BENCH_ENGINES_SCRAPE_INTERVAL_MS', 250),
};
const DEFAULTS = { warmupSeconds: 20, seconds: 30, scrapeIntervalMs: 250 };
/** The CPU measurement: a rate below both contenders' saturation, a longer warm-up, rounds. */
const CPU = {
  rate: positive('BENCH_ENGINES_CPU_RATE', 4),
  warmupSeconds: positive('BENCH_ENGINES_CPU_WARMUP_SECONDS', 40),
  rounds: positive('BENCH_ENGINES_CPU_ROUNDS', 2),
};

/**
 * Four replicas of the emulator's default engine (Llama 3.1 8B on an H100: 15k prompt tokens/s,
 * 120 tokens/s a sequence alone) but with 3,000 KV blocks (48k tokens) instead of 28,000, so
 * that a few thousand-token prompts fill a cache, and the clock slowed 5 times (time_scale 5), so
 * that the request rates the engines saturate at stay within what the gateway, the load
 * generator and four emulators can do on two cores.
 */
const ENGINE: EngineShape = { replicas: 4, kvBlocks: 3000, timeScale: 5 };
/** 32 system prompts of about 3,000 tokens (188 blocks each: 6,000 blocks in all, twice a replica's cache; 1,500 per replica, half of it, if each replica serves its own eighth); answers of 128 tokens. */
const WORKLOAD: WorkloadShape = { seed: 28, groups: 32, systemWords: 3000, maxTokens: 128 };

const CONTENDERS: readonly Contender[] = [
  { strategy: 'least_busy', label: 'least_busy (today: no engine signals)', scrapeIntervalMs: 0 },
  { strategy: 'prefix_affinity', label: 'prefix_affinity + engine signals', scrapeIntervalMs: SETTINGS.scrapeIntervalMs },
];

function rates(): number[] {
  const text = process.env.BENCH_ENGINES_RATES;
  if (text === undefined) return DEFAULT_RATES;
  const values = text.split(',').map(Number);
  if (values.length === 0 || values.some((v) => !(v > 0 && v <= 1000)))
    throw new Error('BENCH_ENGINES_RATES must be rates per second (0-1000), comma-separated');
  return values;
}

export async function runEngines(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  if (!which('taskset')) throw new Error('taskset (util-linux) is required to pin processes to cores');
  const useRedis = process.env.BENCH_ENGINES_STORE === 'redis';
  const redisServer = which('redis-server');
  if (useRedis && !redisServer) throw new Error('BENCH_ENGINES_STORE=redis needs redis-server on the PATH');
  const machine = await describeMachine({ nginx: undefined, wrk: '', redis: redisServer, notes: [] });
  const gatewayCore = 0;
  const loadCore = machine.cores >= 2 ? 1 : 0;
  const ladder = rates();
  const notes: string[] = [];
  if (loadCore === gatewayCore) notes.push('only one core: everything shares core 0');
  if ((Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).some((k) => SETTINGS[k] !== DEFAULTS[k]) || process.env.BENCH_ENGINES_RATES)
    notes.push('run shape changed through BENCH_ENGINES_* environment variables');
  const scratch = join(root, 'bench', 'out', `${started.toISOString().replace(/[:.]/g, '-')}-engines`);
  await mkdir(scratch, { recursive: true });
  log(`Tollgate engines benchmark: rates ${ladder.join(', ')} req/s, ${CONTENDERS.length} contenders; scratch output in ${scratch}`);

  const context: StepContext = {
    root,
    node,
    scratch,
    key: `tg-${randomBytes(32).toString('base64url')}`,
    adminKey: `tg-${randomBytes(32).toString('base64url')}`,
    engine: ENGINE,
    workload: WORKLOAD,
    gatewayCore,
    loadCore,
    redisServer: useRedis ? redisServer : undefined,
    waitReady: helpers.waitReady,
  };
  const steps: Step[] = [];
  for (const [index, rate] of ladder.entries()) {
    // Every other rate runs the contenders in reverse order: a drift of the host favours neither.
    const order = index % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse();
    for (const contender of order) {
      const step = await runStep(context, { rate, contender, name: `${rate}-${contender.strategy}`, ...SETTINGS });
      steps.push(step);
      log(`  ${table([step]).split('\n')[2]}`);
    }
  }
  // The gateway's own cost, apart from the ladder: each contender at one rate both serve, warmed
  // up longer (a fresh gateway's JIT compiles through its first minute), in rounds ABBA.
  log(`Gateway CPU: ${CPU.rounds} rounds at ${CPU.rate} req/s, ${CPU.warmupSeconds} s warm-up, ${SETTINGS.seconds} s measured`);
  const cpuSteps: Step[] = [];
  for (let round = 1; round <= CPU.rounds; round++) {
    const order = round % 2 === 1 ? CONTENDERS : [...CONTENDERS].reverse();
    for (const contender of order) {
      const name = `cpu-${round}-${contender.strategy}`;
      const step = await runStep(context, { rate: CPU.rate, contender, name, warmupSeconds: CPU.warmupSeconds, seconds: SETTINGS.seconds });
      cpuSteps.push(step);
      log(`  round ${round}: ${table([step]).split('\n')[2]}`);
    }
  }
  await stopAll();

  const text = [
    `## ${started
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')}: engine-aware routing (issue 28)`,
    '',
    '- Command: `npm run bench -- --engines`',
    `- Revision: ${await helpers.gitRevision()}`,
    `- Machine: ${machine.cores} cores (\`nproc\`), ${machine.cpu}, ${machine.memory} memory, ${machine.kernel}; Node ${machine.node}${useRedis ? `, Redis ${machine.redis}` : ''}`,
    `- Engines: ${ENGINE.replicas} vLLM emulators (test/support/vllm-emulator, its defaults for Llama 3.1 8B on an H100: prefill 15,000 tokens/s, decode 120 tokens/s a sequence alone, slowed 2% per other running sequence, max 256 running, prefix caching) with ${ENGINE.kvBlocks.toLocaleString('en')} KV blocks of 16 tokens each (${((ENGINE.kvBlocks * 16) / 1000).toFixed(0)}k tokens, in place of an H100's 28,000 blocks) and \`time_scale\` ${ENGINE.timeScale} (every engine duration ${ENGINE.timeScale}× longer in wall time: rates and times below are wall-clock, an H100 would do ${ENGINE.timeScale}× the rates at 1/${ENGINE.timeScale} the times)`,
    `- Gateway: file mode, ${useRedis ? 'Redis store (prefix index and engine signals shared there)' : 'in-memory store'}, one router whose \`vllm\` provider lists the ${ENGINE.replicas} replicas (\`args.api_urls\`); a user without budget or limits; *least_busy* runs without engine signals (\`TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS=0\`: the gateway before issue 28), *prefix_affinity* with engine signals every ${SETTINGS.scrapeIntervalMs} ms (engine room: saturation at its defaults, 5 waiting or 80% KV) and the prefix index; a fresh gateway and fresh engines for every rate and contender (no warm cache or index carried over)`,
    `- Workload: ${WORKLOAD.groups} groups, each a system prompt of about ${WORKLOAD.systemWords.toLocaleString('en')} tokens, every request a short question of its own (about 20 tokens), streamed, \`max_tokens\` ${WORKLOAD.maxTokens}; Poisson arrivals at the offered rate, each to a group drawn uniformly; seeded (seed ${WORKLOAD.seed}), so both contenders receive the same requests at the same times; ${SETTINGS.warmupSeconds} s warm-up (caches fill), then ${SETTINGS.seconds} s measured`,
    "- Figures: *completed req/s* = streams ending with `[DONE]` in the window; *output tokens/s* = content chunks received in the window; *TTFT* from each request's due time (open loop, no coordinated omission), over the requests due in the window, a request without its first token by the window's end counting as its wait so far (then the figure is marked ≥, a lower bound); *prefix-cache hit rate* = `vllm:prefix_cache_hits_total` / `vllm:prefix_cache_queries_total` over the window, all replicas; *gateway CPU per request* = the gateway process's CPU time over the window / completed requests",
    `- Pinning: the gateway on core ${gatewayCore}; the emulators, the load generator${useRedis ? ' and Redis' : ''} on core ${loadCore}`,
    '- Note: other sessions ran tests on this machine during the run; the contenders are compared within the run, rate by rate, so a drift touches both, but absolute figures may be lower than on a quiet machine',
    ...notes.map((n) => `- Note: ${n}`),
    '',
    table(steps),
    '',
    ...goalLines(steps),
    '',
    `### Gateway CPU per request (${CPU.rounds} rounds at ${CPU.rate} req/s, ${CPU.warmupSeconds} s warm-up, ${SETTINGS.seconds} s measured)`,
    '',
    table(cpuSteps),
    '',
    ...cpuLines(cpuSteps),
    '',
  ].join('\n');
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  await writeFile(
    join(scratch, 'steps.json'),
    JSON.stringify({ settings: SETTINGS, cpu: CPU, engine: ENGINE, workload: WORKLOAD, steps, cpuSteps }, null, 2),
  );
  log('');
  log(text);
  log(`Results added at the top of bench/RESULTS.md; took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s.`);
}

// `npm run bench -- --llm`: load shaped like a model's, which the throughput runs do not show:
// thousands of concurrent streams, each a token every 100 ms. Per contender: the CPU and peak
// RSS of the process under test, the time to first token it adds to the upstream's, how long the
// streams took and whether every one completed, and for the Node processes what held their
// event loop (its delay, GC pauses); beside nginx and a bare Node streaming proxy (the floor),
// against which issue 29's goals are judged. Adds a dated section at the top of
// bench/RESULTS.md (the section itself: report-llm.ts). See bench/README.md.
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuSnapshot, cpuUse, otherLoad, type CpuSnapshot, type CpuUse } from '../cpu.ts';
import { peakRssKiB, startPinned, stopAll, waitForPort, gatewayArgs } from '../processes.ts';
import { startRedis, type RedisInstance } from '../redis.ts';
import { startNginxStreamProxy } from '../nginx.ts';
import { prependSection } from '../report.ts';
import { positive, type BenchHelpers } from '../run-shape.ts';
import { describeMachine, freePort, which } from '../system.ts';
import { type LoopStats, readLoopStats, withLoopStats } from './loop-stats-read.ts';
import { type LlmContender, type LlmMeasurement, type Summary, section } from './report-llm.ts';

/** The shape of the run; BENCH_LLM_* change it for a trial, and the results then say so. */
const SETTINGS = {
  streams: positive('BENCH_LLM_STREAMS', 2000),
  chunks: positive('BENCH_LLM_CHUNKS', 20),
  intervalMs: positive('BENCH_LLM_INTERVAL_MS', 100),
  // Each Node process under test is first loaded this long once (its JIT settles), discarded.
  firstWarmupSeconds: positive('BENCH_LLM_FIRST_WARMUP_SECONDS', 15),
  // Each measurement: this long to reach the steady state of `streams` open streams, discarded...
  warmupSeconds: positive('BENCH_LLM_WARMUP_SECONDS', 4),
  // ...then streams started in this window are measured.
  seconds: positive('BENCH_LLM_SECONDS', 15),
  rounds: positive('BENCH_LLM_ROUNDS', 3),
};
const DEFAULTS = { streams: 2000, chunks: 20, intervalMs: 100, firstWarmupSeconds: 15, warmupSeconds: 4, seconds: 15, rounds: 3 };

const MODEL = 'bench-llm';
const CHAT_PATH = '/v1/chat/completions';
const QUIET_THRESHOLD_PERCENT = 15;
const STEAL_THRESHOLD_PERCENT = 5;
const QUIET_WAIT_BUDGET_SECONDS = 120;

interface Server {
  readonly contender: LlmContender;
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  readonly jit: boolean;
  /** The side port of bench/llm/loop-stats.ts in a Node process under test. */
  readonly statsPort?: number;
}

const noisy = (use: Pick<CpuUse, 'otherPercent' | 'stealPercent'>) =>
  (use.otherPercent ?? 0) >= QUIET_THRESHOLD_PERCENT || (use.stealPercent ?? 0) >= STEAL_THRESHOLD_PERCENT;
const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);
const msText = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${Math.round(value)} ms`);
const ms1 = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(1)} ms`);
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);

export async function runLlm(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  // No wrk here: the upstream and the load generator are Node processes; nginx is a contender.
  if (!which('taskset')) throw new Error('taskset (util-linux) is required to pin processes to cores');
  const redisServer = which('redis-server');
  const nginx = which('nginx');
  const tools = {
    nginx,
    wrk: '',
    redis: redisServer,
    notes: [
      ...(nginx ? [] : ['nginx is not available: the nginx contender is skipped, and the goal against its TTFT p99 is not judged']),
      ...(redisServer ? [] : ['redis-server is not available: the contender "Tollgate, all features (Redis)" is skipped']),
    ],
  };
  const machine = await describeMachine(tools);
  const serverCore = 0;
  const loadCore = machine.cores >= 2 ? 1 : 0;
  const notes = [...tools.notes];
  if (loadCore === serverCore) notes.push('only one core: everything shares core 0, the figures are not comparable with 2-core runs');
  if ((Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).some((key) => SETTINGS[key] !== DEFAULTS[key]))
    notes.push('run shape changed through BENCH_LLM_* environment variables');
  const scratch = join(root, 'bench', 'out', `${started.toISOString().replace(/[:.]/g, '-')}-llm`);
  await mkdir(scratch, { recursive: true });
  log(
    `Tollgate LLM-shaped benchmark: ${SETTINGS.streams} concurrent streams of ${SETTINGS.chunks} chunks ${SETTINGS.intervalMs} ms apart; scratch output in ${scratch}`,
  );

  const upstreamPort = await freePort();
  const upstream = startPinned(
    'paced upstream',
    loadCore,
    node,
    [join(root, 'bench/llm/paced-upstream.ts'), String(upstreamPort), String(SETTINGS.chunks), String(SETTINGS.intervalMs)],
    join(scratch, 'paced-upstream.log'),
  );
  await waitForPort(upstreamPort, upstream);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

  const key = `tg-${randomBytes(32).toString('base64url')}`;
  const headers = { authorization: `Bearer ${key}` };
  const bodyFile = join(scratch, 'request.json');
  await writeFile(
    bodyFile,
    JSON.stringify({
      model: MODEL,
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Tell me about foxes in one paragraph.' },
      ],
      max_tokens: 256,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(upstreamUrl));
  const env = { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_LLM_KEY: key };

  const servers: Server[] = [{ contender: 'direct', label: 'upstream direct', url: upstreamUrl, pid: upstream.pid, jit: false }];
  if (nginx) {
    const port = await freePort();
    const proxy = await startNginxStreamProxy(nginx, join(scratch, 'nginx-proxy'), serverCore, port, upstreamPort, SETTINGS.streams);
    servers.push({ contender: 'nginx', label: 'nginx proxy_pass', url: `http://127.0.0.1:${port}`, pid: proxy.pid, jit: false });
  }
  const floorPort = await freePort();
  const floorStats = withLoopStats(root, await freePort(), [join(root, 'bench/llm/stream-proxy.ts'), String(floorPort), upstreamUrl], env);
  const floor = startPinned(
    'bare Node streaming proxy',
    serverCore,
    node,
    floorStats.args,
    join(scratch, 'stream-proxy.log'),
    floorStats.env,
  );
  await waitForPort(floorPort, floor);
  servers.push({
    contender: 'floor',
    label: 'bare Node streaming proxy (floor)',
    url: `http://127.0.0.1:${floorPort}`,
    pid: floor.pid,
    jit: true,
    statsPort: Number(floorStats.env.BENCH_LLM_STATS_PORT),
  });
  let redis: RedisInstance | undefined;
  const variants = [
    { contender: 'gateway-full' as const, label: 'Tollgate, all features (memory)', store: 'memory' },
    ...(tools.redis && process.env.BENCH_LLM_REDIS !== '0'
      ? [{ contender: 'gateway-redis' as const, label: 'Tollgate, all features (Redis)', store: 'redis' }]
      : []),
  ];
  const gatewayLogs: string[] = [];
  for (const variant of variants) {
    if (variant.store === 'redis') redis = await startRedis(tools.redis!, loadCore, join(scratch, 'redis-server.log'));
    const port = await freePort();
    const logFile = join(scratch, `${variant.contender}.log`);
    gatewayLogs.push(logFile);
    const statsPort = await freePort();
    const started = withLoopStats(
      root,
      statsPort,
      gatewayArgs(root, config, port, variant.store === 'redis' ? redis?.url : undefined),
      env,
    );
    const gateway = startPinned('gateway', serverCore, node, started.args, logFile, started.env);
    await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, gateway);
    servers.push({
      contender: variant.contender,
      label: variant.label,
      url: `http://127.0.0.1:${port}`,
      pid: gateway.pid,
      jit: true,
      statsPort,
    });
  }

  let quietBudgetMs = QUIET_WAIT_BUDGET_SECONDS * 1000;
  const waitForQuiet = async () => {
    let load = await otherLoad();
    if (!noisy(load) || quietBudgetMs <= 0) return;
    log(
      `  other processes ${pct(load.otherPercent)} of a core, steal ${pct(load.stealPercent)}; waiting up to ${(quietBudgetMs / 1000).toFixed(0)} s for quiet`,
    );
    const start = Date.now();
    while (noisy(load) && Date.now() - start < quietBudgetMs) load = await otherLoad();
    quietBudgetMs -= Date.now() - start;
  };

  /** One run of the load generator against `server`; CPU and the event loop's figures are read at the window's edges. */
  const load = async (
    server: Server,
    warmupSeconds: number,
    seconds: number,
    name: string,
  ): Promise<{ summary: Summary; cpu: CpuUse; loop: LoopStats | undefined }> => {
    const loopStats = () => (server.statsPort === undefined ? Promise.resolve(undefined) : readLoopStats(server.statsPort));
    const child = startPinned(
      `load ${name}`,
      loadCore,
      node,
      [
        join(root, 'bench/llm/stream-load.ts'),
        server.url + CHAT_PATH,
        String(SETTINGS.streams),
        String(warmupSeconds),
        String(seconds),
        bodyFile,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ],
      join(scratch, `load-${name}.log`),
    );
    let before: Promise<CpuSnapshot> | undefined;
    let after: Promise<CpuSnapshot> | undefined;
    let loop: Promise<LoopStats | undefined> | undefined;
    let summary: Summary | undefined;
    for await (const line of createInterface({ input: child.process.stdout! })) {
      if (line === 'measure-start') {
        before = cpuSnapshot();
        // Read only to reset: what came before the window is not the window's.
        void loopStats();
      } else if (line === 'measure-end') {
        after = cpuSnapshot();
        loop = loopStats();
      } else if (line.startsWith('{')) summary = JSON.parse(line) as Summary;
    }
    const exit = await child.exited;
    if (!summary || !before || !after)
      throw new Error(`the load generator (${name}) ended (${exit}) without its summary; see ${join(scratch, `load-${name}.log`)}`);
    return { summary, cpu: cpuUse(await before, await after, server.pid), loop: await loop };
  };

  // One streamed request first: the answer must be what a client expects.
  const problems: string[] = [];
  for (const server of servers) {
    const problem = await check(server, headers, bodyFile);
    if (problem) {
      problems.push(`${server.label}: ${problem}`);
      log(`  ⚠ ${server.label}: ${problem}`);
    }
  }

  log(`Warming up each Node process (${SETTINGS.firstWarmupSeconds} s of the same load, discarded)`);
  for (const server of servers.filter((s) => s.jit)) await load(server, SETTINGS.firstWarmupSeconds, 1, `${server.contender}-first-warmup`);

  const measurements: LlmMeasurement[] = [];
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    log(`Round ${round} of ${SETTINGS.rounds}`);
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    for (const server of order) {
      await waitForQuiet();
      const { summary, cpu, loop } = await load(server, SETTINGS.warmupSeconds, SETTINGS.seconds, `${server.contender}-${round}`);
      const disturbed = noisy(cpu);
      const rss = await peakRssKiB(server.pid);
      measurements.push({ round, contender: server.contender, label: server.label, summary, cpu, peakRssKiB: rss, loop, disturbed });
      const loopText = loop
        ? `  loop delay p99 ${ms1(loop.delay.p99Ms)} max ${ms1(loop.delay.maxMs)}, GC ${loop.gc.count} pauses ${ms1(loop.gc.totalMs)} longest ${ms1(loop.gc.longestMs)}`
        : '';
      log(
        `  ${server.label.padEnd(34)} streams ${summary.completed}/${summary.started} completed, ${summary.failed} failed  CPU ${pct(cpu.serverPercent)}  peak RSS ${mib(rss)}  TTFT p50 ${msText(summary.ttftP50Ms)} p99 ${msText(summary.ttftP99Ms)}  duration p50 ${msText(summary.durationP50Ms)} p99 ${msText(summary.durationP99Ms)}  other load ${pct(cpu.otherPercent)} steal ${pct(cpu.stealPercent)}${disturbed ? ' (disturbed)' : ''}${loopText}`,
      );
    }
  }
  await stopAll();
  if (redis) await redis.stop().catch(() => undefined);
  let logLines = 0;
  for (const file of gatewayLogs)
    logLines += (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l.trim() !== '').length;
  if (logLines > 0) notes.push(`the gateway wrote ${logLines} warning/error log lines (see ${scratch})`);
  if (measurements.some((m) => m.disturbed))
    notes.push(
      `measurements marked † ran while other processes used ≥ ${QUIET_THRESHOLD_PERCENT}% of a core or the hypervisor stole ≥ ${STEAL_THRESHOLD_PERCENT}%: rerun on a quiet machine`,
    );

  const text = section(
    {
      date: started,
      revision: await helpers.gitRevision(),
      shape: SETTINGS,
      machine: `${machine.cores} cores (\`nproc\`), ${machine.cpu}, ${machine.memory} memory, ${machine.kernel}; Node ${machine.node}, Redis ${machine.redis}`,
      notes: [...notes, ...problems.map((p) => `⚠ check before load failed: ${p}`)],
    },
    measurements,
  );
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  await writeFile(join(scratch, 'measurements.json'), JSON.stringify({ settings: SETTINGS, measurements }, null, 2));
  log('');
  log(text);
  log(`Results added at the top of bench/RESULTS.md; took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s.`);
}

/** The gateway's configuration: one priced router with carbon inputs, one vllm provider, one user with a budget and rate limits far above reach. */
function gatewayConfig(upstreamUrl: string): string {
  return `# Generated by bench/llm/run-llm.ts
users:
  - id: bench-llm
    name: Benchmark, all features
    budget: 1000000
    budget_period: daily
    rate_limits:
      requests_per_minute: 1000000000
      tokens_per_minute: 1000000000000
    keys:
      - name: bench
        key: \${TOLLGATE_BENCH_LLM_KEY}
models:
  - id: ${MODEL}
    type: text-generation
    costs: { prompt_tokens: 2.50, completion_tokens: 10.00 }
    providers:
      - model: bench-upstream-model
        type: vllm
        args:
          api_url: ${upstreamUrl}
          timeout: 60
        carbon: { params_total_b: 8, zone: FRA }
`;
}

/** One stream before the load: status 200, SSE, token chunks, a usage chunk (with a cost through the gateway), [DONE]. */
async function check(server: Server, headers: Record<string, string>, bodyFile: string): Promise<string | undefined> {
  try {
    const response = await fetch(server.url + CHAT_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: await readFile(bodyFile),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (response.status !== 200) return `status ${response.status}: ${text.slice(0, 200)}`;
    if (!text.endsWith('data: [DONE]\n\n')) return 'the stream does not end with data: [DONE]';
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map(
        (e) => JSON.parse(e.slice(6)) as { model?: string; usage?: { total_tokens?: number; cost?: number } | null; choices?: unknown[] },
      );
    if (events.filter((e) => (e.choices?.length ?? 0) > 0).length < SETTINGS.chunks)
      return `${events.length} events, fewer than the ${SETTINGS.chunks} token chunks sent`;
    const usage = events.find((e) => e.usage)?.usage;
    if (!usage?.total_tokens) return 'no usage chunk';
    if (server.contender.startsWith('gateway')) {
      if (!(typeof usage.cost === 'number' && usage.cost > 0)) return 'no cost in the usage chunk';
      if (events.some((e) => e.model !== MODEL)) return "a chunk does not carry the router's name";
    }
    return undefined;
  } catch (error) {
    return `request failed: ${(error as Error).message}`;
  }
}

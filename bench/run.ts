// `npm run bench`: the gateway's overhead against a zero-latency upstream, beside the upstream
// called directly and nginx proxy_pass, for non-streamed and streamed chat; the gateway as a
// pass-through and with all its features (state in memory, then in a Redis of its own). Writes
// bench/RESULTS.md (newest run on top) and prints the tables. See bench/README.md.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { requestBody, type Mode } from './bodies.ts';
import { check } from './check.ts';
import {
  GATEWAY_VARIANTS,
  gatewayLogLines,
  startReference,
  startGateways,
  startUpstream,
  type BenchUser,
  type Server,
} from './contenders.ts';
import { gatewayConfig, newKey } from './gateway-config.ts';
import { cpuSnapshot, cpuUse, type CpuUse } from './cpu.ts';
import { runWrk } from './load.ts';
import { startNginxProxy } from './nginx.ts';
import { installCleanup, peakRssKiB, stopAll, wasInterrupted, type Child } from './processes.ts';
import { describeNoise, noisy, QUIET_THRESHOLD_PERCENT, QuietBudget, STEAL_THRESHOLD_PERCENT } from './quiet.ts';
import {
  beforeAfterLines,
  cpuLines,
  median,
  prependSection,
  ratioLines,
  section,
  table,
  trendRow,
  type ContenderId,
  type Measurement,
} from './report.ts';
import { recordTrend } from './trend.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';
import { beforeCheckout, positive } from './run-shape.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = join(ROOT, 'bench');
const MODES: readonly Mode[] = ['json', 'sse'];
const CHAT_PATH = '/v1/chat/completions';

/** Load shape; the environment may shorten a trial run, and the results then say so. */
const SETTINGS = {
  connections: positive('BENCH_CONNECTIONS', 32),
  threads: positive('BENCH_THREADS', 1),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
  // The gateway runs on V8's JIT, which is still compiling and recompiling its hot path 10-15 s
  // into a run (--trace-opt/--trace-deopt lines per 3 s of load on the all-features path: 2747,
  // 458, 74, 113, 364, 17, 3, 82, 5, 0), on the gateway's one core. A gateway in production runs
  // for hours: each Node process (gateways, bare Node proxy) is warmed up this long per mode
  // once, before the rounds; nginx needs none.
  gatewayWarmupSeconds: positive('BENCH_GATEWAY_WARMUP_SECONDS', 15),
  seconds: positive('BENCH_SECONDS', 6),
  // The host's speed drifts over minutes (by ±40% on these machines), more than the figures
  // being compared differ. Every contender is measured once per round, back to back; ratios are
  // taken within a round and their median reported.
  rounds: positive('BENCH_ROUNDS', 5),
};
const DEFAULTS = { connections: 32, threads: 1, warmupSeconds: 3, gatewayWarmupSeconds: 15, seconds: 6, rounds: 5 };

/** The most the whole run waits for quiet, in seconds, so that it stays within ~13 minutes. */
const QUIET_WAIT_BUDGET_SECONDS = 120;

const log = (line: string) => process.stdout.write(`${line}\n`);
const percent = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);

async function main(): Promise<void> {
  installCleanup();
  if (process.argv.includes('--idle-rss')) {
    // Idle memory in file mode (issue 13): bench/idle-rss.ts.
    const { runIdleRss } = await import('./idle-rss.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runIdleRss({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--queue')) {
    // Queue mode (issue 15): added latency over local mode, a worker's assignments per second, an LLM-shaped run: bench/queue/.
    const { runQueue } = await import('./queue/run-queue.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runQueue({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--dialects')) {
    // Issue 18: CPU per request of Anthropic's Messages and OpenAI's Responses against chat: bench/dialects.ts.
    const { runDialects } = await import('./dialects.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runDialects({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--tracing')) {
    // Issue 30: what OpenTelemetry tracing costs per request, off and on: bench/tracing.ts.
    const { runTracing } = await import('./tracing.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    const at = process.argv.indexOf('--before');
    return runTracing({ root: ROOT, node, gitRevision, waitReady, log, before: at > 0 ? process.argv[at + 1] : undefined });
  }
  if (process.argv.includes('--cluster')) {
    // Issue 31: the full path on a Redis Cluster of three primaries against one Redis: bench/cluster.ts.
    const { runCluster } = await import('./cluster.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runCluster({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--durability')) {
    // Issue 31: what the failover loss bound (--redis-wait-replicas) costs: bench/durability.ts.
    const { runDurability } = await import('./durability.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runDurability({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--hostile')) {
    // Issue 26: hostile requests' event-loop stalls, memory, and a normal client's latency beside them: bench/hostile.ts.
    const { runHostile } = await import('./hostile.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runHostile({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--loop-holds')) {
    // Issue 46, finding 15: how long single requests within the bounds hold the event loop: bench/loop-holds.ts.
    const { runLoopHolds } = await import('./loop-holds.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runLoopHolds({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--instructions')) {
    // Instructions per request under callgrind, before and after: a count the machine's other load does not move.
    const { runInstructions } = await import('./instructions.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runInstructions({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--engines-cost')) {
    // Issue 28: what engine-aware routing adds to the gateway's CPU, part by part, in one process.
    const { runDecisionCost } = await import('./engines/decision-cost.ts');
    return runDecisionCost({ root: ROOT, node: process.execPath, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--engines')) {
    // Issue 28: prefix_affinity with engine signals against least_busy on emulated vLLM replicas: bench/engines/.
    const { runEngines } = await import('./engines/run-engines.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runEngines({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--serial')) {
    // Issue 29: latency at concurrency one, added over the upstream called directly, beside the bare Node proxy: bench/serial.ts.
    const { runSerial } = await import('./serial.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runSerial({ root: ROOT, node, gitRevision, waitReady, log });
  }
  if (process.argv.includes('--llm')) {
    // The LLM-shaped run (many concurrent paced streams) is its own benchmark: bench/llm/.
    const { runLlm } = await import('./llm/run-llm.ts');
    const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
    return runLlm({ root: ROOT, node, gitRevision, waitReady, log });
  }
  const before = beforeCheckout();
  const started = new Date();
  const tools = ensureTools();
  const machine = await describeMachine(tools);
  const serverCore = 0;
  const loadCore = machine.cores >= 2 ? 1 : 0;
  const notes = [...tools.notes];
  if (loadCore === serverCore) notes.push('only one core: everything shares core 0, the figures are not comparable with 2-core runs');
  const defaults = (Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).every((key) => SETTINGS[key] === DEFAULTS[key]);
  if (!defaults) notes.push('load shape changed through BENCH_* environment variables');

  const scratch = join(BENCH, 'out', started.toISOString().replace(/[:.]/g, '-'));
  await mkdir(scratch, { recursive: true });
  log(`Tollgate benchmark: scratch output in ${scratch}`);
  log(
    `Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}; Node ${machine.node}, nginx ${machine.nginx}, ${machine.wrk}, Redis ${machine.redis}`,
  );

  // The upstream: on the load generator's core, so the server under test has core 0 to itself.
  const {
    child: upstream,
    text: upstreamText,
    url: upstreamUrl,
    ports: upstreamPorts,
  } = await startUpstream(tools, scratch, BENCH, loadCore);

  // Other work on the machine (a test suite, a build) disturbs the figures: before each
  // measurement, wait for it to calm down, within a bounded budget for the whole run.
  const quiet = new QuietBudget(QUIET_WAIT_BUDGET_SECONDS, log);

  // API keys of the gateway's two bench users; the other contenders get the same header, so
  // every contender receives the same bytes.
  const keys: Record<BenchUser, string> = { plain: newKey(), full: newKey() };
  const auth = (user: BenchUser) => ({ authorization: `Bearer ${keys[user]}` });

  const measurements: Measurement[] = [];
  /**
   * Measures one contender in one mode. `sidecarPid`, a helper of the server under test that
   * runs on the load core (Redis), gets its CPU use during the measured run returned.
   */
  let round = 0;
  const measure = async (
    contender: ContenderId,
    label: string,
    mode: Mode,
    url: string,
    pid: number,
    headers: Record<string, string>,
    sidecarPid?: number,
  ): Promise<CpuUse | undefined> => {
    await quiet.wait();
    const problem = await check(contender, mode, url, headers);
    if (problem) log(`  ⚠ ${label} ${mode}: ${problem}`);
    const common = {
      wrk: tools.wrk,
      core: loadCore,
      url,
      body: requestBody(mode),
      headers,
      connections: SETTINGS.connections,
      threads: SETTINGS.threads,
      scratchDir: scratch,
    };
    // The warm-up doubles as a probe: when other processes took the CPU during it, wait for
    // quiet and warm up again; a measured run they disturbed is done again. Both come out of
    // the run's waiting budget; once it is spent, what was measured stands and is marked.
    let retry = false;
    for (;;) {
      const warmupStart = await cpuSnapshot();
      await runWrk({ ...common, seconds: SETTINGS.warmupSeconds, name: `${contender}-${mode}-warmup` });
      const warmup = cpuUse(warmupStart, await cpuSnapshot(), pid);
      if (retry) quiet.spend(SETTINGS.warmupSeconds * 1000);
      retry = true;
      if (noisy(warmup) && quiet.remainingMs > 0) {
        log(`  during the warm-up: ${describeNoise(warmup)}; waiting and warming up again`);
        await quiet.wait();
        continue;
      }
      const before = await cpuSnapshot();
      const result = await runWrk({ ...common, seconds: SETTINGS.seconds, name: `${contender}-${mode}` });
      const after = await cpuSnapshot();
      const cpu = cpuUse(before, after, pid);
      const disturbed = noisy(cpu);
      if (disturbed && quiet.remainingMs > 0) {
        log(`  during the measured run (${Math.round(result.rps)} req/s): ${describeNoise(cpu)}; measuring again`);
        quiet.spend(SETTINGS.seconds * 1000);
        await quiet.wait();
        continue;
      }
      const rss = await peakRssKiB(pid);
      measurements.push({ round, contender, label, mode, result, peakRssKiB: rss, problem, cpu, disturbed });
      log(
        `  ${label.padEnd(32)} ${mode.padEnd(4)} ${Math.round(result.rps).toString().padStart(7)} req/s  p50 ${(result.p50Us / 1000).toFixed(2)} ms  p99 ${(result.p99Us / 1000).toFixed(2)} ms  errors ${result.statusErrors}/${result.socketErrors}  server CPU ${percent(cpu.serverPercent)}  other load ${percent(cpu.otherPercent)}  steal ${percent(cpu.stealPercent)}${disturbed ? '  (disturbed)' : ''}`,
      );
      return sidecarPid === undefined ? undefined : cpuUse(before, after, sidecarPid);
    }
  };

  const revision = await gitRevision();
  const beforeRevision = before === undefined ? undefined : await gitRevision(before);
  if (before !== undefined)
    notes.push(
      `before/after in one run: each gateway variant also runs from \`${before}\` at ${beforeRevision}, labelled *(before)*, measured right before or after this tree's in every round`,
    );
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(upstreamUrl));
  const node = existsSync(join(ROOT, 'node_modules/.bin/node')) ? join(ROOT, 'node_modules/.bin/node') : process.execPath;
  const gatewayEnv = { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_PLAIN_KEY: keys.plain, TOLLGATE_BENCH_FULL_KEY: keys.full };
  const redisUse: Record<Mode, number[]> = { json: [], sse: [] };
  let redisPeakKiB: number | undefined;

  // Every server under test is started once and kept for the whole run: a gateway warmed up
  // once runs the code it will run for hours, and each round then measures the contenders one
  // right after the other, seconds apart instead of minutes, so that the host's drift touches
  // the two sides of a ratio alike.
  const servers: Server[] = [
    { contender: 'direct', label: 'upstream direct', url: upstreamUrl, pid: upstream.pid, user: 'plain', modes: MODES, jit: false },
  ];
  if (tools.nginx) {
    const ports = { json: await freePort(), sse: await freePort() };
    const proxy = await startNginxProxy(tools.nginx, join(scratch, 'nginx-proxy'), serverCore, ports, upstreamPorts);
    servers.push({
      contender: 'nginx',
      label: 'nginx proxy_pass',
      url: (mode) => `http://127.0.0.1:${ports[mode]}`,
      pid: proxy.child.pid,
      user: 'plain',
      modes: MODES,
      jit: false,
    });
  }
  for (const reference of ['node', 'fastify'] as const)
    servers.push(await startReference(reference, node, BENCH, scratch, serverCore, upstreamUrl('json'), gatewayEnv));
  const gateways = await startGateways({
    variants: GATEWAY_VARIANTS,
    root: ROOT,
    before,
    node,
    config,
    scratch,
    serverCore,
    loadCore,
    redis: tools.redis,
    env: gatewayEnv,
    modes: MODES,
    waitReady,
  });
  servers.push(...gateways.servers);

  log(`Warming up each Node process (${SETTINGS.gatewayWarmupSeconds} s per mode, discarded)`);
  for (const server of servers.filter((s) => s.jit)) {
    for (const mode of server.modes) {
      await runWrk({
        wrk: tools.wrk,
        core: loadCore,
        url: server.url(mode) + CHAT_PATH,
        body: requestBody(mode),
        headers: auth(server.user),
        connections: SETTINGS.connections,
        threads: SETTINGS.threads,
        seconds: SETTINGS.gatewayWarmupSeconds,
        scratchDir: scratch,
        name: `${server.contender}-${mode}-first-warmup`,
      });
    }
  }

  for (round = 1; round <= SETTINGS.rounds; round++) {
    // Every other round runs the contenders in reverse order: a drift that lasts the round then
    // favours neither side of a ratio over the rounds.
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    log(`Round ${round} of ${SETTINGS.rounds}`);
    for (const mode of MODES) {
      for (const server of order) {
        if (!server.modes.includes(mode)) continue;
        const sidecar = await measure(
          server.contender,
          server.label,
          mode,
          server.url(mode) + CHAT_PATH,
          server.pid,
          auth(server.user),
          server.sidecar?.child.pid,
        );
        if (server.sidecar) {
          if (sidecar?.serverPercent !== undefined) redisUse[mode].push(sidecar.serverPercent);
          log(`  ${''.padEnd(32)} ${mode.padEnd(4)} redis-server CPU ${percent(sidecar?.serverPercent)} (core ${loadCore})`);
        }
      }
    }
  }
  for (const redis of gateways.redis) {
    redisPeakKiB = Math.max(redisPeakKiB ?? 0, (await peakRssKiB(redis.child.pid)) ?? 0);
    await redis.stop();
  }
  await stopAll();
  const gatewayLogProblems = await gatewayLogLines(gateways.logs);
  if (gatewayLogProblems > 0) notes.push(`the gateway wrote ${gatewayLogProblems} warning/error log lines (see bench/out/…/gateway-*.log)`);
  if ((await gitRevision()) !== revision)
    notes.push("the gateway's sources changed while it was being measured: its processes may not all have run the same code");
  const disturbed = measurements.filter((m) => m.disturbed);
  if (disturbed.length > 0) {
    notes.push(
      `${disturbed.length} measurement(s) marked † ran while other processes used ≥ ${QUIET_THRESHOLD_PERCENT}% of a core ("other load" column) or the hypervisor stole ≥ ${STEAL_THRESHOLD_PERCENT}% ("steal"), after the waiting budget was spent: their figures, and ratios using them, are not comparable; rerun on a quiet machine`,
    );
  }

  const info = {
    date: started,
    command: before === undefined ? 'npm run bench' : `npm run bench -- --before ${before}`,
    machine,
    revision,
    upstream: upstreamText,
    gateway:
      'log level warn, one router per mode (priced, carbon inputs) with one `vllm` provider; *pass-through* = in-memory store, a user without budget or rate limit (auth, usage block with cost and carbon, usage record, metrics); *all features (memory)* = in-memory store, a user with a daily budget and request and token rate limits far above reach, whose key has a budget and who is in a team with a budget and alert thresholds (adds the budget hold and settlement at the key, user and team levels, the limiters and prompt-token counting); *all features (Redis)* = the same user and configuration with `--redis-url`: users, keys, budget, rate limits and usage records in Redis on loopback; one process per variant for the whole run, serving both modes',
    load: `wrk, closed loop, ${SETTINGS.connections} connections, ${SETTINGS.threads} thread; each Node process (gateways, bare Node proxy) first warmed up ${SETTINGS.gatewayWarmupSeconds} s per mode (its JIT takes that long to settle); then ${SETTINGS.rounds} rounds, each measuring every contender back to back per mode (${SETTINGS.warmupSeconds} s warm-up, discarded, then ${SETTINGS.seconds} s measured), in reverse order every other round; tables show each contender's median round, ratios are the median of the rounds' ratios`,
    pinning: `server under test on core ${serverCore} (\`taskset -c ${serverCore}\`); upstream and wrk on core ${loadCore}${tools.redis ? `, and Redis too for the Redis contender` : ''}`,
    redis:
      tools.redis && measurements.some((m) => m.contender === 'gateway-redis')
        ? `own \`redis-server\` ${machine.redis} on 127.0.0.1 (\`--save '' --appendonly no\`, temporary directory), core ${loadCore}; empty when its gateway starts, kept for the run; CPU during the measured runs ${percent(median(redisUse.json))} of a core non-streamed, ${percent(median(redisUse.sse))} streamed (medians) (not in the *server CPU* column, which is the gateway's); peak RSS ${redisPeakKiB === undefined ? 'n/a' : `${(redisPeakKiB / 1024).toFixed(1)} MiB`}`
        : undefined,
    notes,
  };
  const text = section(info, measurements);
  await prependSection(join(BENCH, 'RESULTS.md'), text);
  await recordTrend(join(BENCH, 'RESULTS.md'), trendRow(measurements, started, revision));
  await writeFile(
    join(scratch, 'measurements.json'),
    JSON.stringify({ info, measurements: measurements.map((m) => ({ ...m, result: { ...m.result, raw: undefined } })) }, null, 2),
  );

  log('');
  for (const mode of MODES) log(`${mode === 'json' ? 'Non-streamed chat' : 'Streamed chat'}:\n${table(measurements, mode)}\n`);
  for (const line of [...cpuLines(measurements, false), ...ratioLines(measurements, false), ...beforeAfterLines(measurements, false)])
    log(line);
  log(`Results added at the top of ${join('bench', 'RESULTS.md')}; took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s.`);
}

async function waitReady(url: string, child: Child, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead: string | undefined;
  void child.exited.then((code) => (dead = code));
  while (Date.now() < deadline) {
    if (dead !== undefined) throw new Error(`${child.name} exited (${dead}) before it was ready`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs / 1000}s`);
}

/**
 * The code measured: the commit (read-only git), "+ local changes" when the work tree differs,
 * and a digest of the gateway's sources, which tells two runs of uncommitted code apart.
 */
async function gitRevision(root = ROOT): Promise<string> {
  const git = promisify(execFile);
  const digest = createHash('sha256');
  const files = (
    await Promise.all(['bin', 'core', 'gateway'].map((folder) => readdir(join(root, folder), { recursive: true, withFileTypes: true })))
  )
    .flat()
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of files)
    digest
      .update(`${relative(root, file)}\0`)
      .update(await readFile(file))
      .update('\0');
  const sources = `bin/, core/ and gateway/ sources sha256 \`${digest.digest('hex').slice(0, 12)}\``;
  try {
    const head = (await git('git', ['-C', root, 'rev-parse', '--short', 'HEAD'])).stdout.trim();
    const dirty =
      (await git('git', ['--no-optional-locks', '-C', root, 'status', '--porcelain', '--untracked-files=all'])).stdout.trim() !== '';
    return `\`${head}\`${dirty ? ' + local changes' : ''}; ${sources}`;
  } catch {
    return `not a git checkout; ${sources}`;
  }
}

main().catch(async (error: unknown) => {
  if (wasInterrupted()) return; // the signal handler stops the children and exits
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await stopAll();
  process.exit(1);
});

// `npm run bench -- --serial`: latency at concurrency one (issue 29). Requests one at a time on
// one keep-alive connection, non-streamed chat, against the upstream called directly, the bare
// Node proxy, Tollgate as a pass-through and Tollgate with all features on Redis: what a single
// caller waits for the gateway, which throughput runs at 32 connections do not show. Many short
// rounds, interleaved, so that the host's drift touches every contender alike; the *added*
// latency is taken within a round. Adds a dated section at the top of bench/RESULTS.md. See
// bench/README.md.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { requestBody } from './bodies.ts';
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
import { cpuSnapshot, cpuUse } from './cpu.ts';
import { gatewayConfig, newKey } from './gateway-config.ts';
import { runWrk } from './load.ts';
import { adopt, installCleanup, stop, stopAll, type Child } from './processes.ts';
import { describeNoise, noisy, QUIET_THRESHOLD_PERCENT, QuietBudget, STEAL_THRESHOLD_PERCENT } from './quiet.ts';
import { prependSection } from './report.ts';
import { beforeCheckout, positive, type BenchHelpers } from './run-shape.ts';
import type { WindowResult } from './serial-client.ts';
import { serialBeforeAfterLines, serialGoalLines, serialSection, serialTable, type SerialMeasurement } from './serial-report.ts';
import { describeMachine, ensureTools } from './system.ts';

const CHAT_PATH = '/v1/chat/completions';

/** The shape of a run; BENCH_SERIAL_* shorten a trial, and the results then say so. */
const SETTINGS = {
  // Many short rounds rather than a few long ones: the host's speed drifts over minutes, and a
  // p99 is only as steady as the number of rounds whose median is taken.
  rounds: positive('BENCH_SERIAL_ROUNDS', 20),
  // 2,000 requests: the p99 is the 20th slowest of the window, a figure, not a single outlier.
  requests: positive('BENCH_SERIAL_REQUESTS', 2000),
  // Discarded before each window: the connection, the caches and the allocator in steady state.
  warmupRequests: positive('BENCH_SERIAL_WARMUP_REQUESTS', 300),
  // Each Node process's JIT settles over its first 10-15 s of load (see bench/run.ts).
  firstWarmupSeconds: positive('BENCH_SERIAL_FIRST_WARMUP_SECONDS', 15),
};
const DEFAULTS: typeof SETTINGS = { rounds: 20, requests: 2000, warmupRequests: 300, firstWarmupSeconds: 15 };
/** The most the whole run waits for quiet, in seconds. */
const QUIET_WAIT_BUDGET_SECONDS = 120;

/** The contenders: beside the upstream direct and the bare Node proxy, these two gateway variants. */
const VARIANTS = GATEWAY_VARIANTS.filter((v) => v.contender === 'gateway-plain' || v.contender === 'gateway-redis');

export async function runSerial(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  installCleanup();
  const before = beforeCheckout();
  const started = new Date();
  const tools = ensureTools();
  const machine = await describeMachine(tools);
  const [serverCore, loadCore] = [0, machine.cores >= 2 ? 1 : 0];
  const notes = [...tools.notes];
  if (loadCore === serverCore) notes.push('only one core: everything shares core 0, the figures are not comparable with 2-core runs');
  if ((Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).some((key) => SETTINGS[key] !== DEFAULTS[key]))
    notes.push('run shape changed through BENCH_SERIAL_* environment variables');
  const bench = join(root, 'bench');
  const scratch = join(bench, 'out', `${started.toISOString().replace(/[:.]/g, '-')}-serial`);
  await mkdir(scratch, { recursive: true });
  log(`Latency at concurrency one: scratch output in ${scratch}`);

  const upstream = await startUpstream(tools, scratch, bench, loadCore);
  const keys: Record<BenchUser, string> = { plain: newKey(), full: newKey() };
  const auth = (user: BenchUser) => ({ authorization: `Bearer ${keys[user]}` });
  const env = { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_PLAIN_KEY: keys.plain, TOLLGATE_BENCH_FULL_KEY: keys.full };
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, gatewayConfig(upstream.url));
  const servers: Server[] = [
    {
      contender: 'direct',
      label: 'upstream direct',
      url: upstream.url,
      pid: upstream.child.pid,
      user: 'plain',
      modes: ['json'],
      jit: false,
    },
    await startReference('node', node, bench, scratch, serverCore, upstream.url('json'), env),
  ];
  const gateways = await startGateways({
    variants: VARIANTS,
    root,
    before,
    node,
    config,
    scratch,
    serverCore,
    loadCore,
    redis: tools.redis,
    env,
    modes: ['json'],
    waitReady: helpers.waitReady,
  });
  servers.push(...gateways.servers);
  const revision = await helpers.gitRevision();
  if (before !== undefined)
    notes.push(
      `before/after in one run: each gateway variant also runs from \`${before}\` at ${await helpers.gitRevision(before)}, labelled *(before)*, measured right before or after this tree's in every round`,
    );

  log(`Warming up each Node process (${SETTINGS.firstWarmupSeconds} s of wrk at 32 connections, discarded)`);
  for (const server of servers.filter((s) => s.jit)) {
    await runWrk({
      wrk: tools.wrk,
      core: loadCore,
      url: server.url('json') + CHAT_PATH,
      body: requestBody('json'),
      headers: auth(server.user),
      connections: 32,
      threads: 1,
      seconds: SETTINGS.firstWarmupSeconds,
      scratchDir: scratch,
      name: `${server.contender}-first-warmup`,
    });
  }

  const client = startClient(node, join(bench, 'serial-client.ts'), loadCore, join(scratch, 'serial-client.log'));
  const quiet = new QuietBudget(QUIET_WAIT_BUDGET_SECONDS, log);
  const measurements: SerialMeasurement[] = [];
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    // Every other round in reverse order: a drift within a round then favours no contender.
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    log(`Round ${round} of ${SETTINGS.rounds}`);
    for (const server of order) {
      await quiet.wait();
      const origin = server.url('json');
      const problem = await check(server.contender, 'json', origin + CHAT_PATH, auth(server.user));
      if (problem) log(`  ⚠ ${server.label}: ${problem}`);
      for (;;) {
        const start = await cpuSnapshot();
        const result = await client.window({
          origin,
          path: CHAT_PATH,
          headers: { 'content-type': 'application/json', ...auth(server.user) },
          body: requestBody('json'),
          warmup: SETTINGS.warmupRequests,
          requests: SETTINGS.requests,
        });
        const cpu = cpuUse(start, await cpuSnapshot(), server.pid);
        const disturbed = noisy(cpu);
        if (disturbed && quiet.remainingMs > 0) {
          log(`  ${server.label}: ${describeNoise(cpu)} during the window; measuring again`);
          quiet.spend(result.seconds * 1000);
          await quiet.wait();
          continue;
        }
        measurements.push({ round, contender: server.contender, label: server.label, result, problem, cpu, disturbed });
        log(
          `  ${server.label.padEnd(36)} p50 ${(result.p50Us / 1000).toFixed(3)} ms  p99 ${(result.p99Us / 1000).toFixed(3)} ms  max ${(result.maxUs / 1000).toFixed(2)} ms  errors ${result.errors}${result.firstError ? ` (${result.firstError})` : ''}${disturbed ? '  (disturbed)' : ''}`,
        );
        break;
      }
    }
  }
  client.close();
  // Gateways first: one shutting down shares what it learned through its Redis, and would log a
  // warning if Redis were gone already.
  for (const gateway of gateways.children) await stop(gateway);
  for (const redis of gateways.redis) await redis.stop();
  await stopAll();

  const logLines = await gatewayLogLines(gateways.logs);
  if (logLines > 0) notes.push(`the gateway wrote ${logLines} warning/error log lines (see bench/out/…-serial/gateway-*.log)`);
  if ((await helpers.gitRevision()) !== revision)
    notes.push("the gateway's sources changed while it was being measured: its processes may not all have run the same code");
  if (measurements.some((m) => m.disturbed))
    notes.push(
      `windows marked † ran while other processes used ≥ ${QUIET_THRESHOLD_PERCENT}% of a core or the hypervisor stole ≥ ${STEAL_THRESHOLD_PERCENT}%, after the waiting budget was spent: rerun on a quiet machine`,
    );
  const heading = `${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: latency at concurrency one (issue 29)`;
  const facts = [
    `Command: \`npm run bench -- --serial${before === undefined ? '' : ` --before ${before}`}\``,
    `Revision: ${revision}`,
    `Machine: ${machine.cores} cores (\`nproc\`), ${machine.cpu}, ${machine.memory} memory, ${machine.kernel}; Node ${machine.node}, nginx ${machine.nginx}, Redis ${machine.redis}`,
    `Upstream: ${upstream.text}`,
    'Gateway: the configuration of `npm run bench` (bench/gateway-config.ts); *pass-through* = in-memory store, a user without budget or rate limit; *all features (Redis)* = `--redis-url` to a Redis of its own on the load core, a user with a daily budget and request and token rate limits far above reach, in a team with a budget, with a key that has a budget',
    `Load: bench/serial-client.ts (undici, one keep-alive connection per server, one request at a time, latency from process.hrtime.bigint around each request, exact nearest-rank percentiles), non-streamed chat; each Node process first warmed up ${SETTINGS.firstWarmupSeconds} s by wrk at 32 connections; then ${SETTINGS.rounds} rounds, each measuring every contender in turn (${SETTINGS.warmupRequests.toLocaleString('en-US')} requests discarded, then ${SETTINGS.requests.toLocaleString('en-US')} measured), in reverse order every other round`,
    `Pinning: server under test on core ${serverCore} (\`taskset -c ${serverCore}\`); upstream, client and Redis on core ${loadCore}`,
    ...notes.map((note) => `Note: ${note}`),
  ];
  await prependSection(join(bench, 'RESULTS.md'), serialSection({ heading, facts }, measurements));
  await writeFile(join(scratch, 'measurements.json'), JSON.stringify({ settings: SETTINGS, measurements }, null, 2));

  log('');
  log(serialTable(measurements));
  log('');
  for (const line of [...serialGoalLines(measurements, false), ...serialBeforeAfterLines(measurements, false)]) log(line);
  log(`Results added at the top of bench/RESULTS.md; took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s.`);
}

interface WindowRequest {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly warmup: number;
  readonly requests: number;
}

interface SerialClient {
  window(request: WindowRequest): Promise<WindowResult>;
  close(): void;
}

/** The client process (bench/serial-client.ts), pinned to `core`, one window per line each way. */
function startClient(node: string, script: string, core: number, logFile: string): SerialClient {
  const proc = spawn('taskset', ['-c', String(core), node, '--expose-gc', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const child: Child = adopt('serial client', proc, node);
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  void child.exited.then(() => writeFile(logFile, stderr));
  const answers = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  return {
    async window(request) {
      proc.stdin!.write(`${JSON.stringify(request)}\n`);
      // Bounded: a window of requests that each time out after 10 s would still end, but a client
      // that dies must not leave the run waiting.
      const next = await Promise.race([answers.next(), child.exited.then((code) => ({ done: true as const, value: code }))]);
      if (next.done) throw new Error(`the serial client exited (${String(next.value)}): ${stderr.trim().slice(-500)}`);
      const answer = JSON.parse(next.value) as WindowResult | { error: string };
      if ('error' in answer) throw new Error(`the serial client refused a window: ${answer.error}`);
      return answer;
    },
    close() {
      proc.stdin!.end();
    },
  };
}

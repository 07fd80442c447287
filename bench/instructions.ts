// `npm run bench -- --instructions [--before <checkout>]`: the gateway's work per request counted
// in CPU instructions, under valgrind's callgrind, rather than timed: a second view beside the
// timed bench, whose CPU seconds on a shared 2-core machine drift between rounds by more than
// most changes cost. What it cannot see: cache misses and branch mispredictions.
//
// Each gateway runs under callgrind (all its threads: the main one, GC helpers, libuv's pool),
// with engine scraping off where the tree has it. After a warm-up (the JIT has then compiled the
// path), the counters are zeroed, a fixed number of requests is sent, and the counters dumped, in
// several windows per mode. The count is not free of the machine either: work driven by the
// clock (timers, the prompt-ratio sync, a full garbage collection that falls in one window) is
// counted by the wall clock's seconds, which valgrind stretches ~50x and other load stretches
// more. Measured 2026-11-27 beside a test suite: windows of one process differed by up to 30%,
// so the fewest of the windows is compared, and the spread is printed with it.
import { execFile, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join, resolve } from 'node:path';
import { promisify, parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODEL, requestBody, type Mode } from './bodies.ts';
import { gatewayConfig, newKey } from './gateway-config.ts';
import { gatewayArgs, startPinned, stop, waitForPort, type Child } from './processes.ts';
import { startRedis, type RedisInstance } from './redis.ts';
import { positive, type BenchHelpers } from './run-shape.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';

const WARMUP = positive('BENCH_INSTR_WARMUP', 3000);
const REQUESTS = positive('BENCH_INSTR_REQUESTS', 1000);
/** Measured windows per mode: a window that holds a full garbage collection or a late compilation counts more; the least is the path's own work. */
const WINDOWS = positive('BENCH_INSTR_WINDOWS', 4);
/** Requests in flight at once: enough that the gateway is never idle between them. */
const CONCURRENCY = 8;
/** How long a gateway under valgrind may take to start (it compiles its modules ~50x slower). */
const START_TIMEOUT_MS = 30 * 60_000;
const MODES: readonly Mode[] = ['json', 'sse'];

type Variant = {
  readonly id: 'plain' | 'full' | 'redis';
  readonly label: string;
  readonly user: 'plain' | 'full';
  readonly redis: boolean;
};
const VARIANTS: readonly Variant[] = [
  { id: 'plain', label: 'pass-through', user: 'plain', redis: false },
  { id: 'full', label: 'all features (memory)', user: 'full', redis: false },
  { id: 'redis', label: 'all features (Redis)', user: 'full', redis: true },
];

interface Count {
  readonly tree: 'before' | 'after';
  readonly variant: Variant;
  readonly mode: Mode;
  /** Instructions per request in each measured window. */
  readonly perRequest: readonly number[];
}

export async function runInstructions(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('--instructions needs valgrind (Debian package valgrind)');
  const { before: beforeDir } = parseArgs({ options: { before: { type: 'string' } }, strict: false }).values;
  const before = typeof beforeDir === 'string' ? resolve(beforeDir) : undefined;
  if (before !== undefined && !existsSync(join(before, 'bin/tollgate.ts'))) throw new Error(`--before ${before}: no bin/tollgate.ts there`);
  const chosen = (process.env.BENCH_INSTR_VARIANTS ?? 'plain,full,redis').split(',');
  const variants = VARIANTS.filter((v) => chosen.includes(v.id));
  const started = new Date();
  const tools = ensureTools();
  const machine = await describeMachine(tools);
  const scratch = join(root, 'bench', 'out', `instructions-${started.toISOString().replace(/[:.]/g, '-')}`);
  await mkdir(scratch, { recursive: true });
  log(`Instructions per request under callgrind: scratch output in ${scratch}`);

  // A node:http upstream: its speed does not enter a count of the gateway's instructions.
  const upstreamPorts = { json: await freePort(), sse: await freePort() };
  const upstream = startPinned(
    'node upstream',
    1,
    process.execPath,
    [join(root, 'bench', 'upstream-node.ts'), String(upstreamPorts.json), String(upstreamPorts.sse)],
    join(scratch, 'upstream-node.log'),
  );
  await waitForPort(upstreamPorts.json, upstream);
  await waitForPort(upstreamPorts.sse, upstream);
  const config = join(scratch, 'gateway.yaml');
  await writeFile(
    config,
    gatewayConfig((mode) => `http://127.0.0.1:${upstreamPorts[mode]}`),
  );
  const keys = { plain: newKey(), full: newKey() };
  const env = { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_PLAIN_KEY: keys.plain, TOLLGATE_BENCH_FULL_KEY: keys.full };
  const redis: RedisInstance | undefined =
    tools.redis && variants.some((v) => v.redis) ? await startRedis(tools.redis, 1, join(scratch, 'redis.log')) : undefined;

  const trees = before
    ? ([
        ['before', before],
        ['after', root],
      ] as const)
    : ([['after', root]] as const);
  const counts: Count[] = [];
  for (const variant of variants) {
    if (variant.redis && !redis) {
      log(`  ${variant.label}: skipped, no redis-server`);
      continue;
    }
    // The trees' gateways of one variant run side by side, one per core: each count is its own process's.
    const results = await Promise.all(
      trees.map(([tree, dir], i) =>
        countGateway({
          tree,
          dir,
          variant,
          node,
          config,
          env,
          scratch,
          core: i,
          redisUrl: variant.redis ? redis!.url : undefined,
          key: keys[variant.user],
        }),
      ),
    );
    for (const result of results.flat()) {
      counts.push(result);
      log(
        `  ${result.tree.padEnd(6)} ${variant.label.padEnd(24)} ${result.mode}  ${result.perRequest.map((n) => Math.round(n).toLocaleString('en')).join(' / ')} instructions per request`,
      );
    }
    // Each variant's Redis starts empty for the next one (budgets, usage records).
    if (redis) {
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
    }
  }
  await stop(upstream);
  await redis?.stop();

  const revision = await helpers.gitRevision();
  const beforeRevision = before ? await helpers.gitRevision(before) : undefined;
  const section = report({ counts, started, machine, revision, beforeRevision, before: before !== undefined });
  log(`\n${section}`);
  const results = join(root, 'bench', 'RESULTS.md');
  await writeFile(results, `${await readFile(results, 'utf8')}\n${section}`);
  log(`Appended to ${results}`);
}

interface GatewayRun {
  readonly tree: 'before' | 'after';
  readonly dir: string;
  readonly variant: Variant;
  readonly node: string;
  readonly config: string;
  readonly env: NodeJS.ProcessEnv;
  readonly scratch: string;
  readonly core: number;
  readonly redisUrl: string | undefined;
  readonly key: string;
}

/** Starts one tree's gateway under callgrind and counts its instructions per request in each mode. */
async function countGateway(run: GatewayRun): Promise<Count[]> {
  const { tree, dir, variant, scratch } = run;
  const port = await freePort();
  const name = `${tree}-${variant.id}`;
  const out = join(scratch, `callgrind.${name}.out`);
  // Periodic work is counted by the wall clock's seconds: engine scraping is off where the tree has it.
  const scrapes = readTree(dir, 'gateway/config/settings/queue.ts').includes('engineScrapeIntervalMs');
  const args = [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}`,
    run.node,
    ...gatewayArgs(dir, run.config, port, run.redisUrl),
    ...(scrapes ? ['--engine-scrape-interval-ms', '0'] : []),
  ];
  const child = startPinned(`gateway ${name} (callgrind)`, run.core, 'valgrind', args, join(scratch, `${name}.log`), run.env);
  try {
    await waitHealthy(`http://127.0.0.1:${port}/readyz`, child);
    const counts: Count[] = [];
    for (const mode of MODES) {
      const url = `http://127.0.0.1:${port}/v1/chat/completions`;
      await send(url, run.key, mode, WARMUP);
      const perRequest: number[] = [];
      for (let window = 0; window < WINDOWS; window++) {
        await callgrind(['-z', String(child.pid)]);
        await send(url, run.key, mode, REQUESTS);
        const dumped = await dump(child.pid, out);
        perRequest.push(dumped / REQUESTS);
      }
      counts.push({ tree, variant, mode, perRequest });
    }
    return counts;
  } finally {
    await stop(child, 30_000);
  }
}

function readTree(dir: string, path: string): string {
  try {
    return readFileSync(join(dir, path), 'utf8');
  } catch {
    return '';
  }
}

const callgrind = (args: string[]) => promisify(execFile)('callgrind_control', args);

/** Dumps the counters and reads the instructions counted since they were last zeroed. */
async function dump(pid: number, out: string): Promise<number> {
  const dir = resolve(out, '..');
  const base = out.slice(dir.length + 1);
  const existing = new Set((await readdir(dir)).filter((f) => f.startsWith(`${base}.`)));
  await callgrind(['-d', String(pid)]);
  for (let i = 0; i < 600; i++) {
    const fresh = (await readdir(dir)).filter((f) => f.startsWith(`${base}.`) && !existing.has(f));
    for (const file of fresh) {
      const totals = /^totals:\s+(\d+)/m.exec(await readFile(join(dir, file), 'utf8'));
      if (totals) return Number(totals[1]);
    }
    await sleep(100);
  }
  throw new Error(`callgrind wrote no dump for ${out}`);
}

async function waitHealthy(url: string, child: Child): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let dead: string | undefined;
  void child.exited.then((code) => (dead = code));
  while (Date.now() < deadline) {
    if (dead !== undefined) throw new Error(`${child.name} exited (${dead}) before it was ready`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(5000) })).ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(1000);
  }
  throw new Error(`${child.name} was not ready within ${START_TIMEOUT_MS / 1000} s`);
}

/** Sends `count` requests, CONCURRENCY at a time, on kept-alive connections; every answer must be a 200. */
async function send(url: string, key: string, mode: Mode, count: number): Promise<void> {
  const body = Buffer.from(requestBody(mode));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let left = count;
  let failed = 0;
  const one = () =>
    new Promise<void>((done) => {
      const request = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length },
        },
        (response) => {
          if (response.statusCode !== 200) failed++;
          response.resume();
          response.on('end', done);
          response.on('error', () => done());
        },
      );
      request.on('error', () => {
        failed++;
        done();
      });
      request.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left > 0) {
        left--;
        await one();
      }
    }),
  );
  agent.destroy();
  if (failed > 0) throw new Error(`${failed} of ${count} requests to ${MODEL[mode]} failed`);
}

function report(run: {
  counts: readonly Count[];
  started: Date;
  machine: Awaited<ReturnType<typeof describeMachine>>;
  revision: string;
  beforeRevision: string | undefined;
  before: boolean;
}): string {
  const { counts, machine } = run;
  const fmt = (n: number) => Math.round(n).toLocaleString('en');
  const least = (values: readonly number[]) => Math.min(...values);
  const rows: string[] = [];
  for (const count of counts.filter((c) => c.tree === 'after')) {
    const old = counts.find((c) => c.tree === 'before' && c.variant === count.variant && c.mode === count.mode);
    const ratio = old ? `${((100 * least(count.perRequest)) / least(old.perRequest)).toFixed(1)}%` : '';
    const cell = (c: Count | undefined) => (c ? `**${fmt(least(c.perRequest))}** (${c.perRequest.map(fmt).join(', ')})` : '');
    rows.push(
      `| ${count.variant.label} | ${count.mode === 'json' ? 'non-streamed' : 'streamed'} | ${cell(old)} | ${cell(count)} | ${ratio} |`,
    );
  }
  return [
    `## Instructions per request (callgrind), ${run.started.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `- Command: \`npm run bench -- --instructions${run.before ? ' --before <checkout>' : ''}\`${run.beforeRevision ? `; before ${run.beforeRevision}` : ''}, after ${run.revision}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}, ${machine.kernel}; Node ${machine.node}`,
    `- Method: each gateway under valgrind's callgrind (every thread counted), engine scraping off, node:http upstream; per mode a warm-up of ${WARMUP} requests, then ${WINDOWS} windows of ${REQUESTS} requests (${CONCURRENCY} at a time), each counted from zeroed counters to a dump; in bold the fewest, which the ratio compares (clock-driven work, a full garbage collection, counts more in a window that lasted longer). Cache misses do not show in them.`,
    '',
    '| Variant | Mode | Before: fewest (each window) | After: fewest (each window) | After, % of before |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

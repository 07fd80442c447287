// `npm run bench -- --queue`: queue mode (docs/routing-modes.md) measured three ways, each
// written to a dated section at the top of bench/RESULTS.md:
// 1. the latency queue mode adds over local mode, on loopback, at a moderate open-loop rate
//    against a zero-latency upstream (one gateway with its own router worker, rounds alternating);
// 2. the assignments per second one router worker sustains on one core (entries added at once);
// 3. an LLM-shaped run: two providers capped at 8 with answers of 1 to 2 s, 200 concurrent
//    clients of three priorities: how full the providers' slots stay, that no backend ever sees
//    more than its cap, and the wait of each priority.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { cpuSnapshot, cpuUse } from '../cpu.ts';
import { gatewayArgs, startPinned, stop, stopAll, waitForPort } from '../processes.ts';
import { startRedis } from '../redis.ts';
import { median, prependSection } from '../report.ts';
import { positive, type BenchHelpers } from '../run-shape.ts';
import { describeMachine, freePort, which } from '../system.ts';
import { queueKeys } from '../../core/store/redis/queue-keys.ts';

const SETTINGS = {
  rate: positive('BENCH_QUEUE_RATE', 300),
  warmupSeconds: positive('BENCH_QUEUE_WARMUP_SECONDS', 15),
  seconds: positive('BENCH_QUEUE_SECONDS', 10),
  rounds: positive('BENCH_QUEUE_ROUNDS', 3),
  floodEntries: positive('BENCH_QUEUE_FLOOD', 20_000),
  clients: positive('BENCH_QUEUE_CLIENTS', 200),
  llmWarmupSeconds: positive('BENCH_QUEUE_LLM_WARMUP_SECONDS', 15),
  llmSeconds: positive('BENCH_QUEUE_LLM_SECONDS', 60),
};
const DEFAULTS = {
  rate: 300,
  warmupSeconds: 15,
  seconds: 10,
  rounds: 3,
  floodEntries: 20_000,
  clients: 200,
  llmWarmupSeconds: 15,
  llmSeconds: 60,
};
const CAP = 8;
const PRIORITIES = [-5, 0, 5] as const;

const execFileP = promisify(execFile);

export async function runQueue(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  if (!which('taskset')) throw new Error('taskset (util-linux) is required to pin processes to cores');
  const redisServer = which('redis-server');
  if (!redisServer) throw new Error('redis-server is required: queue mode runs on Redis');
  const machine = await describeMachine({ nginx: undefined, wrk: '', redis: redisServer, notes: [] });
  const serverCore = 0;
  const loadCore = machine.cores >= 2 ? 1 : 0;
  const notes: string[] = [];
  if ((Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).some((key) => SETTINGS[key] !== DEFAULTS[key]))
    notes.push('run shape changed through BENCH_QUEUE_* environment variables');
  const scrape = process.env.TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS;
  if (scrape !== undefined)
    notes.push(
      `engines' /metrics read every ${scrape} ms (TOLLGATE_ENGINE_SCRAPE_INTERVAL_MS; 0: not read, so late binding does not pace the queue: with it on, a \`vllm\` provider is given at most its saturation's max_waiting, 5, requests a reading)`,
    );
  const scratch = join(root, 'bench', 'out', `${started.toISOString().replace(/[:.]/g, '-')}-queue`);
  await mkdir(scratch, { recursive: true });
  log(`Tollgate queue-mode benchmark; scratch output in ${scratch}`);

  const redis = await startRedis(redisServer, loadCore, join(scratch, 'redis-server.log'));
  const client = new Redis(redis.url);
  const zeroPort = await freePort();
  const zero = startPinned(
    'zero-latency upstream',
    loadCore,
    node,
    [join(root, 'bench/upstream-node.ts'), String(zeroPort), String(await freePort())],
    join(scratch, 'upstream.log'),
  );
  await waitForPort(zeroPort, zero);
  const slowPorts = [await freePort(), await freePort()];
  for (const [i, port] of slowPorts.entries()) {
    const slow = startPinned(
      `slow upstream ${i}`,
      loadCore,
      node,
      [join(root, 'bench/queue/slow-upstream.ts'), String(port), '1000', '2000'],
      join(scratch, `slow-${i}.log`),
    );
    await waitForPort(port, slow);
  }
  const keys = Object.fromEntries(PRIORITIES.map((p) => [p, `tg-${randomBytes(32).toString('base64url')}`])) as Record<number, string>;
  const config = join(scratch, 'gateway.yaml');
  await writeFile(config, JSON.stringify(gatewayConfig(`http://127.0.0.1:${zeroPort}`, slowPorts, keys)));
  const port = await freePort();
  const gateway = startPinned(
    'gateway',
    serverCore,
    node,
    [...gatewayArgs(root, config, port, redis.url), '--router-workers', '1'],
    join(scratch, 'gateway.log'),
    {
      ...process.env,
      NODE_ENV: 'production',
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await helpers.waitReady(`${url}/readyz`, gateway);
  const openLoop = async (model: string, warmup: number, seconds: number) => {
    const { stdout } = await execFileP(
      'taskset',
      [
        '-c',
        String(loadCore),
        node,
        join(root, 'bench/queue/open-loop.ts'),
        url,
        model,
        String(SETTINGS.rate),
        String(warmup),
        String(seconds),
        keys[0]!,
      ],
      { maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as { sent: number; ok: number; failed: number; p50Ms: number; p99Ms: number };
  };

  // 1. Added latency of queue mode over local mode.
  log(`1. queue mode against local mode: ${SETTINGS.rate} requests/s open loop, ${SETTINGS.rounds} rounds of ${SETTINGS.seconds} s each`);
  await openLoop('bench-local', SETTINGS.warmupSeconds, 1);
  await openLoop('bench-queue', SETTINGS.warmupSeconds, 1);
  const rounds: { local: Awaited<ReturnType<typeof openLoop>>; queue: Awaited<ReturnType<typeof openLoop>> }[] = [];
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    const local = await openLoop('bench-local', 2, SETTINGS.seconds);
    const queue = await openLoop('bench-queue', 2, SETTINGS.seconds);
    rounds.push({ local, queue });
    log(`  round ${round}: local p50 ${ms(local.p50Ms)} p99 ${ms(local.p99Ms)}; queue p50 ${ms(queue.p50Ms)} p99 ${ms(queue.p99Ms)}`);
  }

  // 3. The LLM-shaped run, on the same gateway.
  log(
    `3. LLM-shaped: ${SETTINGS.clients} clients of priorities ${PRIORITIES.join(', ')}, two providers capped at ${CAP}, answers of 1-2 s`,
  );
  for (const p of slowPorts) await fetch(`http://127.0.0.1:${p}/stats/reset`);
  const samples: number[][] = [[], []];
  let sampling = true;
  const sampler = (async () => {
    const measureFrom = Date.now() + SETTINGS.llmWarmupSeconds * 1000;
    while (sampling) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (Date.now() < measureFrom) continue;
      const now = Date.now();
      for (const [i, id] of ['capped-a', 'capped-b'].entries())
        samples[i]!.push(await client.zcount(queueKeys.slots('bench-capped', id), now, '+inf'));
    }
  })();
  const { stdout: llmOut } = await execFileP(
    'taskset',
    [
      '-c',
      String(loadCore),
      node,
      join(root, 'bench/queue/priority-load.ts'),
      url,
      'bench-capped',
      String(SETTINGS.clients),
      String(SETTINGS.llmWarmupSeconds),
      String(SETTINGS.llmSeconds),
      ...PRIORITIES.map((p) => `${p}=${keys[p]}`),
    ],
    { maxBuffer: 1 << 20 },
  );
  sampling = false;
  await sampler;
  const byPriority = JSON.parse(llmOut.trim().split('\n').at(-1)!) as Record<
    string,
    { ok: number; refused: number; failed: number; p50WaitMs: number; p99WaitMs: number }
  >;
  const upstreamStats = await Promise.all(
    slowPorts.map(async (p) => (await (await fetch(`http://127.0.0.1:${p}/stats`)).json()) as { peak: number; served: number }),
  );
  await stop(gateway);

  // 2. Assignments per second of one worker on one core: entries added at once, drained.
  log(`2. one router worker on one core: ${SETTINGS.floodEntries} entries added at once`);
  const workerPort = await freePort();
  const worker = startPinned(
    'router worker',
    serverCore,
    node,
    [
      join(root, 'bin/tollgate.ts'),
      'router-worker',
      '--redis-url',
      redis.url,
      '--routers',
      'bench-flood',
      '--port',
      String(workerPort),
      '--log-level',
      'warn',
    ],
    join(scratch, 'worker.log'),
  );
  await helpers.waitReady(`http://127.0.0.1:${workerPort}/readyz`, worker);
  // The worker is up and idle: the entries arrive at once (one pipeline), and it drains them. Their
  // gateway is this process, listening on its reply channel: a worker drops the entries of a
  // gateway that does not listen (one that died), and gives them nothing.
  const listener = new Redis(redis.url);
  await listener.subscribe(queueKeys.reply('bench-nobody'));
  const stream = queueKeys.stream('bench-flood');
  const pipeline = client.pipeline();
  for (let i = 0; i < SETTINGS.floodEntries; i++) {
    pipeline.xadd(
      stream,
      '*',
      'id',
      `flood.${i}`,
      'gw',
      'bench-nobody',
      'ep',
      'chat',
      'pr',
      0,
      'mw',
      600_000,
      'ag',
      0,
      'mq',
      1_000_000,
      'ex',
      '',
      'st',
      600_000,
    );
  }
  const before = await cpuSnapshot();
  const t0 = performance.now();
  await pipeline.exec();
  let assigned = 0;
  while (assigned < SETTINGS.floodEntries && performance.now() - t0 < 300_000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    assigned = Number((await client.hget(queueKeys.stats('bench-flood'), 'assigned')) ?? 0);
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = await cpuSnapshot();
  const workerCpu = cpuUse(before, after, worker.pid).serverPercent;
  const redisCpu = cpuUse(before, after, redis.child.pid).serverPercent;
  await stop(worker);
  listener.disconnect();
  client.disconnect();
  await redis.stop();
  await stopAll();

  const localP50 = median(rounds.map((r) => r.local.p50Ms))!;
  const localP99 = median(rounds.map((r) => r.local.p99Ms))!;
  const queueP50 = median(rounds.map((r) => r.queue.p50Ms))!;
  const queueP99 = median(rounds.map((r) => r.queue.p99Ms))!;
  const addedP50 = rounds.map((r) => r.queue.p50Ms - r.local.p50Ms);
  const addedP99 = rounds.map((r) => r.queue.p99Ms - r.local.p99Ms);
  const util = samples.map((s) => (s.length ? s.reduce((a, b) => a + b, 0) / s.length / CAP : 0));
  const maxSlots = samples.map((s) => Math.max(0, ...s));
  const revision = await helpers.gitRevision();
  const lines = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: queue mode (issue 15)`,
    '',
    '- Command: `npm run bench -- --queue`',
    `- Revision: ${revision}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}; Node ${machine.node}, Redis ${machine.redis}`,
    `- Method: the gateway (from the sources, \`--router-workers 1\`: its worker in the same process) alone on core ${serverCore}; Redis, the upstreams and the load generators on core ${loadCore}.${notes.length ? ` Notes: ${notes.join('; ')}.` : ''}`,
    '',
    `### Added latency of queue mode over local mode (${SETTINGS.rate} requests/s open loop, zero-latency upstream, ${SETTINGS.rounds} rounds of ${SETTINGS.seconds} s)`,
    '',
    '| Round | local p50 | local p99 | queue p50 | queue p99 | added p50 | added p99 |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${ms(r.local.p50Ms)} | ${ms(r.local.p99Ms)} | ${ms(r.queue.p50Ms)} | ${ms(r.queue.p99Ms)} | ${ms(r.queue.p50Ms - r.local.p50Ms)} | ${ms(r.queue.p99Ms - r.local.p99Ms)} |`,
    ),
    '',
    `- Median: local p50 ${ms(localP50)}, p99 ${ms(localP99)}; queue p50 ${ms(queueP50)}, p99 ${ms(queueP99)}. Added: p50 ${ms(median(addedP50)!)} (rounds ${addedP50.map(ms).join(', ')}), p99 ${ms(median(addedP99)!)} (rounds ${addedP99.map(ms).join(', ')}). Goal: p50 at most 1 ms and p99 at most 3 ms more than local: **${verdict(addedP50, 1)} for p50, ${verdict(addedP99, 3)} for p99**.`,
    `- Failed requests: local ${rounds.reduce((n, r) => n + r.local.failed, 0)}, queue ${rounds.reduce((n, r) => n + r.queue.failed, 0)}.`,
    '',
    '### Assignments per second of one router worker on one core',
    '',
    `- ${SETTINGS.floodEntries} entries added at once (one pipeline) to \`router.bench-flood\` (one provider, no cap), while one \`tollgate router-worker\` process waited on core ${serverCore}: all assigned ${seconds.toFixed(2)} s after the first was added: **${Math.round(SETTINGS.floodEntries / seconds)} assignments per second**. CPU meanwhile: the worker ${pct(workerCpu)} of a core, Redis ${pct(redisCpu)} (the Lua step of each assignment runs in Redis).`,
    '',
    `### LLM-shaped: two providers capped at ${CAP}, answers of 1-2 s, ${SETTINGS.clients} concurrent clients`,
    '',
    `- Clients spread evenly over users of priority ${PRIORITIES.join(', ')}; router \`max_wait_seconds: 120\`, aging ${2} s per level (the default); ${SETTINGS.llmSeconds} s measured after ${SETTINGS.llmWarmupSeconds} s.`,
    `- Slot utilisation (slots in use / ${CAP}, sampled every 200 ms from Redis): provider a ${(util[0]! * 100).toFixed(1)}%, provider b ${(util[1]! * 100).toFixed(1)}%; most slots seen in use: ${maxSlots.join(' and ')}.`,
    `- The backends' own count of requests at once (peak): ${upstreamStats.map((s) => s.peak).join(' and ')} (cap ${CAP}); answered ${upstreamStats.map((s) => s.served).join(' and ')}.`,
    '',
    '| Priority | served | refused (503) | failed | wait p50 | wait p99 |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
    ...PRIORITIES.map((p) => {
      const t = byPriority[String(p)]!;
      return `| ${p} | ${t.ok} | ${t.refused} | ${t.failed} | ${sec(t.p50WaitMs)} | ${sec(t.p99WaitMs)} |`;
    }),
    '',
  ];
  const text = lines.join('\n');
  await prependSection(join(root, 'bench/RESULTS.md'), `${text}\n`);
  log(text);
}

function gatewayConfig(zeroUrl: string, slowPorts: number[], keys: Record<number, string>) {
  const zeroProvider = (id: string) => ({ id, model: 'bench', type: 'vllm', args: { api_url: zeroUrl } });
  return {
    users: PRIORITIES.map((priority) => ({
      id: `bench-${priority < 0 ? 'low' : priority > 0 ? 'high' : 'mid'}`,
      name: `bench priority ${priority}`,
      priority,
      keys: [{ name: 'bench', key: keys[priority] }],
    })),
    models: [
      { id: 'bench-local', type: 'text-generation', routing_mode: 'local', providers: [zeroProvider('local-a')] },
      { id: 'bench-queue', type: 'text-generation', routing_mode: 'queue', providers: [zeroProvider('queue-a')] },
      { id: 'bench-flood', type: 'text-generation', routing_mode: 'queue', providers: [zeroProvider('flood-a')] },
      {
        id: 'bench-capped',
        type: 'text-generation',
        routing_mode: 'queue',
        load_balancing_strategy: 'least_busy',
        queue: { max_wait_seconds: 120, max_waiting: 1000 },
        providers: slowPorts.map((port, i) => ({
          id: `capped-${'ab'[i]}`,
          model: 'bench',
          type: 'vllm',
          max_concurrent: CAP,
          args: { api_url: `http://127.0.0.1:${port}`, timeout: 30 },
        })),
      },
    ],
  };
}

const ms = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${value.toFixed(2)} ms`);
const sec = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${(value / 1000).toFixed(1)} s`);
const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);

/** Met only when every round is within the goal: a figure on either side of it across runs is not met. */
function verdict(values: readonly number[], goalMs: number): string {
  if (values.every((v) => v <= goalMs)) return 'met in every round';
  if (values.every((v) => v > goalMs)) return 'not met';
  return 'not met (on both sides of the goal across rounds)';
}

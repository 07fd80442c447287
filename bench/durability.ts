// `npm run bench -- --durability`: what the failover loss bound costs (issue 31,
// `--redis-wait-replicas`, docs/redis.md). Three gateways of the same all-features configuration
// on one Redis primary with one replica: the bound off (budget leases on, the default), the bound
// off without leases (`--lease-requests 0`: every admission a round trip, which the bound implies),
// and the bound on (`--redis-wait-replicas 1`: each batch followed by WAIT for the replica). Each
// gateway is pinned to core 0 while measured; the upstream, wrk, the primary and the replica share
// core 1. Non-streamed chat; each gateway once per round, in reverse order every other round;
// requests a second, latency and CPU per request, medians over the rounds.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { MODEL } from './bodies.ts';
import { cpuPerRequest } from './cpu.ts';
import { gatewayConfig, newKey } from './gateway-config.ts';
import { runWrk } from './load.ts';
import { gatewayArgs, startNodeUpstream, startPinned, stopAll } from './processes.ts';
import { startRedis } from './redis.ts';
import { median, prependSection } from './report.ts';
import { positive, type BenchHelpers } from './run-shape.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';

const SETTINGS = {
  connections: positive('BENCH_CONNECTIONS', 32),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
  gatewayWarmupSeconds: positive('BENCH_GATEWAY_WARMUP_SECONDS', 10),
  seconds: positive('BENCH_SECONDS', 6),
  rounds: positive('BENCH_ROUNDS', 5),
};

interface Contender {
  readonly id: 'off' | 'no-leases' | 'on';
  readonly label: string;
  readonly args: readonly string[];
}

const CONTENDERS: readonly Contender[] = [
  { id: 'off', label: 'bound off (leases on, the default)', args: [] },
  { id: 'no-leases', label: 'bound off, --lease-requests 0', args: ['--lease-requests', '0'] },
  { id: 'on', label: 'bound on, --redis-wait-replicas 1', args: ['--redis-wait-replicas', '1'] },
];

export async function runDurability(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  const tools = ensureTools();
  if (!tools.redis) throw new Error('redis-server is needed: apt-get install redis-server');
  const machine = await describeMachine(tools);
  const scratch = join(tmpdir(), `tollgate-durability-${process.pid}`);
  await mkdir(scratch, { recursive: true });
  const key = newKey();

  const primary = await startRedis(tools.redis, 1, join(scratch, 'redis-primary.log'));
  const replica = await startRedis(tools.redis, 1, join(scratch, 'redis-replica.log'), ['--replicaof', '127.0.0.1', String(primary.port)]);
  await inSync(primary.port);
  const { ports: upstreamPorts } = await startNodeUpstream(root, node, 1, join(scratch, 'upstream.log'));
  const config = join(scratch, 'gateway.yaml');
  await writeFile(
    config,
    gatewayConfig((mode) => `http://127.0.0.1:${upstreamPorts[mode === 'json' ? 0 : 1]}`),
  );

  const gateways = new Map<Contender['id'], { port: number; pid: number }>();
  for (const contender of CONTENDERS) {
    const port = await freePort();
    const child = startPinned(
      `gateway ${contender.id}`,
      0,
      node,
      [...gatewayArgs(root, config, port, primary.url), ...contender.args],
      join(scratch, `gateway-${contender.id}.log`),
      { ...process.env, NODE_ENV: 'production', TOLLGATE_BENCH_FULL_KEY: key, TOLLGATE_BENCH_PLAIN_KEY: newKey() },
    );
    await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, child);
    gateways.set(contender.id, { port, pid: child.pid! });
  }
  log(`Machine: ${machine.cores} cores, ${machine.cpu}; Node ${machine.node}, ${machine.wrk}, Redis ${machine.redis}`);

  const load = (contender: Contender, seconds: number, name: string) =>
    runWrk({
      wrk: tools.wrk,
      core: 1,
      url: `http://127.0.0.1:${gateways.get(contender.id)!.port}/v1/chat/completions`,
      body: JSON.stringify({
        model: MODEL.json,
        messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
        max_tokens: 16,
      }),
      headers: { authorization: `Bearer ${key}` },
      connections: SETTINGS.connections,
      threads: 1,
      seconds,
      scratchDir: scratch,
      name,
    });

  log(`Warming up (${SETTINGS.gatewayWarmupSeconds} s per gateway, discarded)`);
  for (const contender of CONTENDERS) await load(contender, SETTINGS.gatewayWarmupSeconds, `${contender.id}-first-warmup`);

  const measured = new Map<Contender['id'], { rps: number[]; p50: number[]; p99: number[]; micros: number[] }>(
    CONTENDERS.map((c) => [c.id, { rps: [], p50: [], p99: [], micros: [] }]),
  );
  let problems = 0;
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    log(`Round ${round} of ${SETTINGS.rounds}`);
    for (const contender of round % 2 === 1 ? CONTENDERS : [...CONTENDERS].reverse()) {
      const { result, cpu, micros } = await cpuPerRequest(
        (seconds, warmup) => load(contender, seconds, warmup ? `${contender.id}-warmup` : contender.id),
        gateways.get(contender.id)!.pid,
        SETTINGS.warmupSeconds,
        SETTINGS.seconds,
      );
      problems += result.statusErrors + result.socketErrors;
      const m = measured.get(contender.id)!;
      m.rps.push(result.rps);
      m.p50.push(result.p50Us);
      m.p99.push(result.p99Us);
      m.micros.push(micros);
      log(
        `  ${contender.label.padEnd(38)} ${Math.round(result.rps).toString().padStart(6)} req/s  p50 ${(result.p50Us / 1000).toFixed(2)} ms  gateway CPU ${cpu.serverPercent?.toFixed(0)}%  ${micros.toFixed(1)} µs/request  errors ${result.statusErrors}/${result.socketErrors}`,
      );
    }
  }
  await stopAll();
  await replica.stop();
  await primary.stop();

  const row = (c: Contender) => {
    const m = measured.get(c.id)!;
    return `| ${c.label} | ${Math.round(median(m.rps)!)} | ${(median(m.p50)! / 1000).toFixed(2)} | ${(median(m.p99)! / 1000).toFixed(2)} | ${median(m.micros)!.toFixed(1)} |`;
  };
  const of = (id: Contender['id'], base: Contender['id'], what: 'rps' | 'micros') =>
    `${((median(measured.get(id)![what])! / median(measured.get(base)![what])!) * 100).toFixed(0)}%`;
  const text = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: what the failover loss bound costs (issue 31)`,
    '',
    '- Command: `npm run bench -- --durability`',
    `- Revision: ${await helpers.gitRevision()}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}, ${machine.kernel}; Node ${machine.node}; ${machine.wrk}; Redis ${machine.redis}`,
    `- Method: three gateways of one configuration (bench/gateway-config.ts: the main run's all-features user, with budgets at the key, user and team levels and rate limits far above reach; a router with one \`vllm\` provider, a node:http upstream on core 1), on one Redis primary with one replica (both on core 1, no persistence), each gateway on core 0 while measured; wrk on core 1, ${SETTINGS.connections} connections, non-streamed chat. Warm-up ${SETTINGS.gatewayWarmupSeconds} s per gateway, then ${SETTINGS.rounds} rounds of ${SETTINGS.warmupSeconds} s discarded + ${SETTINGS.seconds} s measured per gateway, in reverse order every other round; medians over the rounds.${problems > 0 ? ` ${problems} request(s) failed during the measured runs.` : ''}`,
    '',
    '| Gateway | Requests/s | p50 ms | p99 ms | CPU µs per request |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...CONTENDERS.map(row),
    '',
    `The bound on: ${of('on', 'off', 'rps')} of the default's requests a second at ${of('on', 'off', 'micros')} of its CPU per request; against leases off alone (which the bound implies), ${of('on', 'no-leases', 'rps')} and ${of('on', 'no-leases', 'micros')}. On loopback the replica's acknowledgement is a few tens of microseconds away; across a network, add its round trip to every admission and settlement batch.`,
    '',
  ].join('\n');
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  log(text);
}

/** Waits until the replica is in sync (a WAIT before it would wait out its timeout). */
async function inSync(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1' });
  try {
    for (let i = 0; i < 200; i++) {
      if ((await client.info('replication')).includes('state=online')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the replica did not come in sync within 10 s');
  } finally {
    client.disconnect();
  }
}

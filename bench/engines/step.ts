// One measurement of the engines benchmark: a fresh fleet (fleet.ts, with its own Redis when the
// run uses one) for one contender, the workload at one rate from the load generator
// (stream-arrivals.ts), the gateway's CPU time and the engines' prefix-cache counters read at the
// window's edges. While it runs, the engines' state (waiting, running, KV use) and the gateway's
// routing view are written every second to `<name>-trace.jsonl` in the scratch folder: what
// explains a figure afterwards (which replica was saturated, when).
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cpuSnapshot, cpuUse, type CpuSnapshot } from '../cpu.ts';
import { startPinned, type Child } from '../processes.ts';
import { startRedis, type RedisInstance } from '../redis.ts';
import { type Contender, type EngineShape, type Fleet, type PrefixCounters, prefixCounters, startFleet } from './fleet.ts';
import type { Step } from './report.ts';
import type { EngineLoadSummary, WorkloadShape } from './workload.ts';

export interface StepContext {
  readonly root: string;
  readonly node: string;
  readonly scratch: string;
  readonly key: string;
  readonly adminKey: string;
  readonly engine: EngineShape;
  readonly workload: WorkloadShape;
  readonly gatewayCore: number;
  readonly loadCore: number;
  /** redis-server to start one per step with, or undefined for the in-memory store. */
  readonly redisServer: string | undefined;
  readonly waitReady: (url: string, child: Child) => Promise<void>;
}

export interface StepShape {
  readonly rate: number;
  readonly contender: Contender;
  readonly name: string;
  readonly warmupSeconds: number;
  readonly seconds: number;
}

/** Runs one step on a fleet of its own, stopped after it whatever happens. */
export async function runStep(context: StepContext, shape: StepShape): Promise<Step> {
  let redis: RedisInstance | undefined;
  if (context.redisServer)
    redis = await startRedis(context.redisServer, context.loadCore, join(context.scratch, `${shape.name}-redis.log`));
  try {
    const fleet = await startFleet({
      ...context,
      name: shape.name,
      contender: shape.contender,
      engineCore: context.loadCore,
      redisUrl: redis?.url,
    });
    const trace = startTrace(fleet, context, join(context.scratch, `${shape.name}-trace.jsonl`));
    try {
      return await measure(context, fleet, shape);
    } finally {
      trace.stop();
      await fleet.stop();
    }
  } finally {
    await redis?.stop();
  }
}

type Edge = [CpuSnapshot, PrefixCounters];

async function measure(context: StepContext, fleet: Fleet, shape: StepShape): Promise<Step> {
  const child = startPinned(
    `load ${shape.name}`,
    context.loadCore,
    context.node,
    [
      join(context.root, 'bench/engines/stream-arrivals.ts'),
      `${fleet.gatewayUrl}/v1/chat/completions`,
      context.key,
      String(shape.rate),
      String(shape.warmupSeconds),
      String(shape.seconds),
      JSON.stringify(context.workload),
    ],
    join(context.scratch, `${shape.name}-load.log`),
  );
  let before: Promise<Edge> | undefined;
  let after: Promise<Edge> | undefined;
  let summary: EngineLoadSummary | undefined;
  for await (const line of createInterface({ input: child.process.stdout! })) {
    if (line === 'measure-start') before = Promise.all([cpuSnapshot(), prefixCounters(fleet)]);
    else if (line === 'measure-end') after = Promise.all([cpuSnapshot(), prefixCounters(fleet)]);
    else if (line.startsWith('{')) summary = JSON.parse(line) as EngineLoadSummary;
  }
  const exit = await child.exited;
  if (!summary || !before || !after) throw new Error(`the load generator (${shape.name}) ended (${exit}) without its summary`);
  const [[cpuBefore, prefixBefore], [cpuAfter, prefixAfter]] = await Promise.all([before, after]);
  const cpu = cpuUse(cpuBefore, cpuAfter, fleet.gateway.pid);
  return {
    rate: shape.rate,
    strategy: shape.contender.strategy,
    label: shape.contender.label,
    summary,
    prefix: { queries: prefixAfter.queries - prefixBefore.queries, hits: prefixAfter.hits - prefixBefore.hits },
    cpu,
    disturbed: (cpu.stealPercent ?? 0) >= 5,
  };
}

/** Every second: each engine's /emulator/stats and the gateway's /v1/admin/routing, one JSON line. */
function startTrace(fleet: Fleet, context: StepContext, file: string): { stop(): void } {
  const begun = performance.now();
  const read = async (url: string, headers: Record<string, string> = {}) => {
    try {
      return (await (await fetch(url, { headers, signal: AbortSignal.timeout(900) })).json()) as unknown;
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  const timer = setInterval(() => {
    void Promise.all([
      Promise.all(fleet.engines.map((e) => read(`${e.url}/emulator/stats`))),
      read(`${fleet.gatewayUrl}/v1/admin/routing`, { authorization: `Bearer ${context.adminKey}` }),
    ]).then(([engines, routing]) =>
      appendFile(file, `${JSON.stringify({ s: Math.round((performance.now() - begun) / 100) / 10, engines, routing })}\n`).catch(() => {}),
    );
  }, 1000);
  return { stop: () => clearInterval(timer) };
}

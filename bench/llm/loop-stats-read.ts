// The benchmark's side of bench/llm/loop-stats.ts: how a Node process under test is started with
// it, and one read of what it measured since the last read (checked, since it crosses a process).
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { z } from 'zod';

const loopStatsSchema = z.strictObject({
  delay: z.strictObject({
    p50Ms: z.number().nonnegative(),
    p99Ms: z.number().nonnegative(),
    maxMs: z.number().nonnegative(),
    samples: z.number().int().nonnegative(),
  }),
  gc: z.strictObject({
    count: z.number().int().nonnegative(),
    totalMs: z.number().nonnegative(),
    longestMs: z.number().nonnegative(),
    majorCount: z.number().int().nonnegative(),
    majorMs: z.number().nonnegative(),
  }),
});

/** Event-loop delay beyond the sampling interval (ms) and GC pauses, over one window. */
export type LoopStats = z.infer<typeof loopStatsSchema>;

/** The Node arguments that load the instrument before `script`, and the environment that turns it on. */
export function withLoopStats(root: string, port: number, args: readonly string[], env: NodeJS.ProcessEnv) {
  return {
    args: ['--import', join(root, 'bench/llm/loop-stats.ts'), ...args],
    env: { ...env, BENCH_LLM_STATS_PORT: String(port) },
  };
}

// Its own connection: the reads never wait behind the load's thousands of sockets.
const agent = new Agent({ connections: 1 });

/** What the process measured since the last read (and resets it); undefined when it does not answer within 10 s. */
export async function readLoopStats(port: number): Promise<LoopStats | undefined> {
  try {
    // reset: no idle socket is left to keep the benchmark's process alive at its end.
    const answer = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent, reset: true, signal: AbortSignal.timeout(10_000) });
    return loopStatsSchema.parse(await answer.body.json());
  } catch {
    return undefined;
  }
}

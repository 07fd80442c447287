// The engines benchmark's figures and its section of bench/RESULTS.md: per rate and contender,
// completed requests/s, output tokens/s, TTFT p50/p90, the engines' prefix-cache hit rate and
// the gateway's CPU per request; then issue 28's goals judged on them (prefix_affinity against
// least_busy at the same rate, in the same run).
import type { CpuUse } from '../cpu.ts';
import type { Strategy } from './fleet.ts';
import type { EngineLoadSummary } from './workload.ts';

export interface Step {
  readonly rate: number;
  readonly strategy: Strategy;
  readonly label: string;
  readonly summary: EngineLoadSummary;
  /** Prefix-cache tokens looked up and found, over the window, all replicas. */
  readonly prefix: { readonly queries: number; readonly hits: number };
  readonly cpu: CpuUse;
  readonly disturbed: boolean;
}

/** The goals of issue 28 ("Done when"). */
export const GOALS = { saturatedTokensTimes: 1.8, saturatedTtftP90Share: 1 / 5, lightWithinPercent: 5, cpuSharePercent: 10 };
/** A rate is at or past least_busy's saturation when it completes under this share of the offered requests. */
const SATURATED_COMPLETION_SHARE = 0.95;

const completedPerSecond = (s: Step) => s.summary.completed / s.summary.seconds;
const tokensPerSecond = (s: Step) => s.summary.outputTokens / s.summary.seconds;
const hitRate = (s: Step) => (s.prefix.queries === 0 ? undefined : s.prefix.hits / s.prefix.queries);
/** Gateway CPU time per completed request, ms. */
export const cpuPerRequestMs = (s: Step) =>
  s.cpu.serverPercent === undefined || s.summary.completed === 0
    ? undefined
    : ((s.cpu.serverPercent / 100) * s.summary.seconds * 1000) / s.summary.completed;

/** The p-th percentile of the TTFTs, and whether it is a lower bound (a request without its first token by the window's end). */
export function ttft(s: Step, p: number): { ms: number; atLeast: boolean } | undefined {
  const values = s.summary.ttftMs;
  if (values.length === 0) return undefined;
  const index = Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1);
  // The censored values are the window's end minus the due time: the largest of them sit at the top.
  return { ms: values[index]!, atLeast: index >= values.length - s.summary.ttftCensored };
}

const ms = (t: { ms: number; atLeast: boolean } | undefined) =>
  t === undefined ? 'n/a' : `${t.atLeast ? '≥ ' : ''}${t.ms >= 10_000 ? `${(t.ms / 1000).toFixed(0)} s` : `${(t.ms / 1000).toFixed(2)} s`}`;
const pct = (v: number | undefined, digits = 0) => (v === undefined ? 'n/a' : `${(v * 100).toFixed(digits)}%`);
const num = (v: number, digits = 1) => v.toFixed(digits);

/** The markdown table, a row per rate and contender. */
export function table(steps: readonly Step[]): string {
  const lines = [
    '| offered req/s | contender | due | completed req/s | output tokens/s | TTFT p50 | TTFT p90 | prefix-cache hit rate | gateway CPU per request | failed |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of steps) {
    const failed = Object.values(s.summary.failures).reduce((a, b) => a + b, 0);
    const cpu = cpuPerRequestMs(s);
    lines.push(
      `| ${s.rate} | ${s.label}${s.disturbed ? ' †' : ''} | ${s.summary.due} | ${num(completedPerSecond(s), 2)} | ${num(tokensPerSecond(s), 0)} | ${ms(ttft(s, 50))} | ${ms(ttft(s, 90))} | ${pct(hitRate(s), 1)} | ${cpu === undefined ? 'n/a' : `${cpu.toFixed(2)} ms`} | ${failed} |`,
    );
  }
  return lines.join('\n');
}

interface Pair {
  readonly rate: number;
  readonly base: Step;
  readonly affinity: Step;
}

function pairs(steps: readonly Step[]): Pair[] {
  const rates = [...new Set(steps.map((s) => s.rate))].sort((a, b) => a - b);
  return rates.flatMap((rate) => {
    const base = steps.find((s) => s.rate === rate && s.strategy === 'least_busy');
    const affinity = steps.find((s) => s.rate === rate && s.strategy === 'prefix_affinity');
    return base && affinity ? [{ rate, base, affinity }] : [];
  });
}

const saturated = (s: Step) => s.summary.completed < SATURATED_COMPLETION_SHARE * s.summary.due;
const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');

/** The goals, judged per rate: a line each, in markdown. */
export function goalLines(steps: readonly Step[]): string[] {
  const all = pairs(steps);
  if (all.length === 0) return [];
  const lines: string[] = [];
  const light = all[0]!;
  const lightTokens = tokensPerSecond(light.affinity) / tokensPerSecond(light.base);
  const lightP90 = ttft(light.affinity, 90)!.ms / ttft(light.base, 90)!.ms;
  const within = GOALS.lightWithinPercent / 100;
  lines.push(
    `- **Light load** (${light.rate} req/s): prefix_affinity's output tokens/s ${num(lightTokens, 3)}× least_busy's, TTFT p90 ${num(lightP90, 2)}× (goal: within ${GOALS.lightWithinPercent}%, i.e. tokens/s ${num(1 - within, 2)}-${num(1 + within, 2)}× and TTFT p90 ≤ ${num(1 + within, 2)}×): ${verdict(Math.abs(lightTokens - 1) <= within && lightP90 <= 1 + within)}.`,
  );
  for (const { rate, base, affinity } of all.filter((p) => saturated(p.base))) {
    const tokens = tokensPerSecond(affinity) / tokensPerSecond(base);
    const p90 = ttft(affinity, 90)!.ms / ttft(base, 90)!.ms;
    const bound = ttft(base, 90)!.atLeast ? ' (least_busy’s p90 is a lower bound, so the true share is smaller still)' : '';
    lines.push(
      `- **${rate} req/s, least_busy saturated** (completed ${num(completedPerSecond(base), 2)} of ${rate} req/s offered): output tokens/s ${num(tokens, 2)}× (goal ≥ ${GOALS.saturatedTokensTimes}×: ${verdict(tokens >= GOALS.saturatedTokensTimes)}), TTFT p90 ${num(p90, 3)}× least_busy's${bound} (goal ≤ ${num(GOALS.saturatedTtftP90Share, 2)}×: ${verdict(p90 <= GOALS.saturatedTtftP90Share)}).`,
    );
  }
  if (!all.some((p) => saturated(p.base)))
    lines.push('- No rate saturated least_busy: the ladder does not reach saturation (raise BENCH_ENGINES_RATES).');
  return lines;
}

/**
 * The CPU prefix_affinity (with engine signals) adds per request over least_busy (without), as
 * a share of least_busy's, round by round (each round measures both, back to back), then the
 * median of the rounds'.
 */
export function cpuLines(cpuSteps: readonly Step[]): string[] {
  const rounds: { base: number; affinity: number }[] = [];
  for (let i = 0; i + 1 < cpuSteps.length; i += 2) {
    const pair = [cpuSteps[i]!, cpuSteps[i + 1]!];
    const base = pair.find((s) => s.strategy === 'least_busy');
    const affinity = pair.find((s) => s.strategy === 'prefix_affinity');
    const b = base && cpuPerRequestMs(base);
    const a = affinity && cpuPerRequestMs(affinity);
    if (b !== undefined && a !== undefined) rounds.push({ base: b, affinity: a });
  }
  if (rounds.length === 0) return ['- Gateway CPU: not measured (no round with both contenders).'];
  const shares = rounds.map((r) => (r.affinity - r.base) / r.base);
  const median = middle(shares);
  const spread = Math.max(...shares) - Math.min(...shares);
  const unsaturated = cpuSteps.every((s) => !saturated(s));
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  return [
    `- **Gateway CPU per request**, least_busy (no engine signals) → prefix_affinity (engine scrapes every interval, engine room, prefix index), round by round: ${rounds.map((r, i) => `${r.base.toFixed(2)} → ${r.affinity.toFixed(2)} ms (${signed(shares[i]!)})`).join('; ')}; median ${signed(median)} of the request path's CPU (goal < ${GOALS.cpuSharePercent}%: ${verdict(median < GOALS.cpuSharePercent / 100)})${spread > GOALS.cpuSharePercent / 100 ? `; ⚠ the rounds differ by ${(spread * 100).toFixed(0)} points, more than the goal: the run cannot tell a difference that small (rerun on a quiet machine, with more rounds: BENCH_ENGINES_CPU_ROUNDS)` : ''}${unsaturated ? '' : '; ⚠ a contender did not complete ≥ 95% of the requests at this rate: CPU per request is then not comparable'}.`,
  ];
}

/** The median: the middle value, or the mean of the two middle ones. */
function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

export { pairs };

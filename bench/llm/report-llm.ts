// The LLM-shaped run's section of bench/RESULTS.md: one table of what each contender cost and
// how its streams fared, one of what held the event loop of the Node processes (delay and GC
// pauses over the measured window), and issue 29's goals judged round by round against nginx and
// the floor measured seconds apart, then the median of the rounds.
import type { CpuUse } from '../cpu.ts';
import { median } from '../report.ts';
import type { LoopStats } from './loop-stats-read.ts';

export type LlmContender = 'direct' | 'nginx' | 'floor' | 'gateway-full' | 'gateway-redis';

/** What bench/llm/stream-load.ts prints at its end. */
export interface Summary {
  readonly started: number;
  readonly completed: number;
  readonly failed: number;
  readonly failures: Record<string, number>;
  readonly unfinished: number;
  readonly ttftP50Ms: number | null;
  readonly ttftP99Ms: number | null;
  readonly durationP50Ms: number | null;
  readonly durationP99Ms: number | null;
  readonly seconds: number;
}

export interface LlmMeasurement {
  readonly round: number;
  readonly contender: LlmContender;
  readonly label: string;
  readonly summary: Summary;
  readonly cpu: CpuUse;
  readonly peakRssKiB: number | undefined;
  /** Event-loop delay and GC pauses over the window (Node processes under test only). */
  readonly loop: LoopStats | undefined;
  readonly disturbed: boolean;
}

export interface LlmShape {
  readonly streams: number;
  readonly chunks: number;
  readonly intervalMs: number;
  readonly firstWarmupSeconds: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly rounds: number;
}

export interface SectionInfo {
  readonly date: Date;
  readonly revision: string;
  readonly machine: string;
  readonly shape: LlmShape;
  readonly notes: readonly string[];
}

/** Issue 29's goals for 2,000 LLM-shaped streams, each a ratio within a round; the median of the rounds is judged. */
export const GOALS = { ttftP99TimesNginx: 4, rssTimesFloor: 1.25, cpuTimesFloor: 1.15 };

const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);
const msText = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${Math.round(value)} ms`);
const msText1 = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(2)} ms`);
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);
const times = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(2)}×`);

/** CPU time per stream started in the window, ms: comparable when a saturated contender starts fewer. */
const cpuPerStream = (m: LlmMeasurement) =>
  m.cpu.serverPercent === undefined || m.summary.started === 0
    ? undefined
    : ((m.cpu.serverPercent / 100) * m.summary.seconds * 1000) / m.summary.started;
const values = (runs: readonly LlmMeasurement[], pick: (m: LlmMeasurement) => number | null | undefined) =>
  runs.map(pick).filter((v): v is number => typeof v === 'number');
const med = (runs: readonly LlmMeasurement[], pick: (m: LlmMeasurement) => number | null | undefined) => median(values(runs, pick));
const failedStreams = (m: LlmMeasurement) => m.summary.failed + m.summary.unfinished;

/** One round's ratio of a contender's figure to a reference's, and whether a run it uses was disturbed. */
interface Ratio {
  readonly value: number | undefined;
  readonly disturbed: boolean;
}

export function section(info: SectionInfo, measurements: readonly LlmMeasurement[]): string {
  const { shape } = info;
  const lines = [
    `## ${info.date
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')}: LLM-shaped streams`,
    '',
    '- Command: `npm run bench -- --llm`',
    `- Revision: ${info.revision}`,
    `- Machine: ${info.machine}`,
    `- Load: ${shape.streams} concurrent streamed chat requests (closed loop: each stream, once over, is followed by another), each ${shape.chunks} token chunks ${shape.intervalMs} ms apart, the first at once, from \`bench/llm/paced-upstream.ts\` (OpenAI chunk format, \`usage: null\` on each, then finish, usage chunk and \`[DONE]\`); load generator \`bench/llm/stream-load.ts\` (undici, one connection per stream); each Node process first loaded ${shape.firstWarmupSeconds} s (discarded); then ${shape.rounds} rounds, each measuring every contender back to back (reverse order every other round): ${shape.warmupSeconds} s to reach the steady state, then the streams started in the next ${shape.seconds} s are measured`,
    '- Pinning: the process under test on core 0 (nginx: master and its one worker); the paced upstream, the load generator (and Redis for the Redis contender) on core 1',
    "- Figures: the median over the rounds of each; *CPU per stream* is the CPU time over the window divided by the streams started in it (a saturated contender starts fewer streams in the closed loop, so its *CPU* flatters it); *added TTFT* is the contender's time to first token minus the upstream's called directly in the same round; *CPU* is the process under test's CPU time over the measured window in % of one core; *peak RSS* is its VmHWM",
    ...info.notes.map((note) => `- Note: ${note}`),
    '',
    ...costTable(measurements),
    ...failureLines(measurements),
    '',
    ...loopTable(measurements),
    '',
    ...goalLines(measurements),
    '',
  ];
  return lines.join('\n');
}

function groups(measurements: readonly LlmMeasurement[]): LlmMeasurement[][] {
  const byContender = new Map<LlmContender, LlmMeasurement[]>();
  for (const m of measurements) byContender.set(m.contender, [...(byContender.get(m.contender) ?? []), m]);
  return [...byContender.values()];
}

/** A percentile of the time to first token minus the upstream's called directly in the same round. */
const addedTtftIn =
  (measurements: readonly LlmMeasurement[], p: 'ttftP50Ms' | 'ttftP99Ms') =>
  (m: LlmMeasurement): number | undefined => {
    const base = measurements.find((x) => x.contender === 'direct' && x.round === m.round)?.summary[p];
    const own = m.summary[p];
    return base === null || base === undefined || own === null ? undefined : own - base;
  };

function costTable(measurements: readonly LlmMeasurement[]): string[] {
  const addedTtft = (m: LlmMeasurement, p: 'ttftP50Ms' | 'ttftP99Ms') => addedTtftIn(measurements, p)(m);
  const lines = [
    '| Contender | streams completed / failed | streams started per s | CPU | CPU per round | CPU per stream | peak RSS | TTFT p50 | TTFT p99 | added TTFT p50 | added TTFT p99 | duration p50 | duration p99 | other load | steal |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const runs of groups(measurements)) {
    const first = runs[0]!;
    const isDirect = first.contender === 'direct';
    const completed = runs.reduce((s, m) => s + m.summary.completed, 0);
    const failed = runs.reduce((s, m) => s + failedStreams(m), 0);
    const dagger = runs.some((m) => m.disturbed) ? ' †' : '';
    const rate = med(runs, (m) => m.summary.started / m.summary.seconds);
    lines.push(
      `| ${first.label}${dagger} | ${completed} / ${failed} | ${rate === undefined ? 'n/a' : Math.round(rate)} | ${pct(med(runs, (m) => m.cpu.serverPercent))} | ${runs.map((m) => pct(m.cpu.serverPercent)).join(' · ')} | ${msText1(med(runs, cpuPerStream))} | ${mib(med(runs, (m) => m.peakRssKiB))} | ${msText(med(runs, (m) => m.summary.ttftP50Ms))} | ${msText(med(runs, (m) => m.summary.ttftP99Ms))} | ${isDirect ? '—' : msText(med(runs, (m) => addedTtft(m, 'ttftP50Ms')))} | ${isDirect ? '—' : msText(med(runs, (m) => addedTtft(m, 'ttftP99Ms')))} | ${msText(med(runs, (m) => m.summary.durationP50Ms))} | ${msText(med(runs, (m) => m.summary.durationP99Ms))} | ${pct(med(runs, (m) => m.cpu.otherPercent))} | ${pct(med(runs, (m) => m.cpu.stealPercent))} |`,
    );
  }
  return lines;
}

function failureLines(measurements: readonly LlmMeasurement[]): string[] {
  const failures = measurements
    .filter((m) => failedStreams(m) > 0)
    .map((m) => {
      const reasons = Object.entries(m.summary.failures).map(([k, v]) => `${v}× ${k}`);
      if (m.summary.unfinished > 0) reasons.push(`${m.summary.unfinished}× still open 60 s after the window`);
      return `- Failed streams: ${m.label} round ${m.round}: ${reasons.join(', ')}`;
    });
  return failures.length > 0 ? ['', ...failures] : [];
}

/** What held the event loop of each Node process under test during the window: the delay beyond the 10 ms sampling interval, and GC. */
function loopTable(measurements: readonly LlmMeasurement[]): string[] {
  const lines = [
    "*Event loop of the Node processes under test over the measured window* (`bench/llm/loop-stats.ts`, loaded into each with `--import`): the delay of a 10 ms timer beyond its interval, p50 / p99 / max, and the GC pauses (every `gc` performance entry: count, total, longest; of them the major GCs), the median of the rounds, with each round's max delay and longest pause:",
    '',
    '| Contender | loop delay p50 | p99 | max | max per round | GC pauses | GC total | longest GC | longest per round | major GCs | major total |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const runs of groups(measurements)) {
    const measured = runs.filter((m) => m.loop !== undefined);
    if (measured.length === 0) continue;
    const loop = (pick: (s: NonNullable<LlmMeasurement['loop']>) => number) => med(measured, (m) => (m.loop ? pick(m.loop) : undefined));
    const perRound = (pick: (s: NonNullable<LlmMeasurement['loop']>) => number) =>
      runs.map((m) => (m.loop ? msText1(pick(m.loop)) : 'n/a')).join(' · ');
    lines.push(
      `| ${runs[0]!.label} | ${msText1(loop((s) => s.delay.p50Ms))} | ${msText1(loop((s) => s.delay.p99Ms))} | ${msText1(loop((s) => s.delay.maxMs))} | ${perRound((s) => s.delay.maxMs)} | ${loop((s) => s.gc.count) ?? 'n/a'} | ${msText(loop((s) => s.gc.totalMs))} | ${msText1(loop((s) => s.gc.longestMs))} | ${perRound((s) => s.gc.longestMs)} | ${loop((s) => s.gc.majorCount) ?? 'n/a'} | ${msText(loop((s) => s.gc.majorMs))} |`,
    );
  }
  return lines.length > 4 ? lines : ['*Event loop*: not measured (no Node process answered its side port).'];
}

/** Issue 29's goals, each a ratio within a round (contender and reference measured seconds apart), judged on the median of the rounds. */
function goalLines(measurements: readonly LlmMeasurement[]): string[] {
  const runsOf = (c: LlmContender) => measurements.filter((m) => m.contender === c);
  /** The contender's figure over the reference's, round by round; a round is disturbed when either (or the direct run an added TTFT subtracts) was. */
  const ratios = (c: LlmContender, reference: LlmContender, pick: (m: LlmMeasurement) => number | null | undefined, viaDirect = false) => {
    const out: Ratio[] = [];
    for (const m of runsOf(c)) {
      const base = runsOf(reference).find((x) => x.round === m.round);
      const direct = runsOf('direct').find((x) => x.round === m.round);
      const own = pick(m);
      const ref = base ? pick(base) : undefined;
      const disturbed = m.disturbed || base?.disturbed === true || (viaDirect && direct?.disturbed === true);
      // A reference at or below 0 (an added TTFT under a slower direct run) has no ratio: the round shows n/a.
      if (typeof own === 'number' && typeof ref === 'number') out.push({ value: ref > 0 ? own / ref : undefined, disturbed });
    }
    return out;
  };
  const list = (rounds: readonly Ratio[]) => rounds.map((r) => `${times(r.value)}${r.disturbed ? ' †' : ''}`).join(', ') || 'n/a';
  const judged = (rounds: readonly Ratio[], limit: number) => {
    const values = rounds.map((r) => r.value).filter((v): v is number => v !== undefined);
    const middle = median(values);
    // A figure whose rounds land on both sides of its goal is not met, whatever its median says.
    const verdict =
      middle === undefined
        ? 'n/a'
        : values.every((v) => v <= limit)
          ? 'met'
          : values.every((v) => v > limit)
            ? 'not met'
            : 'not settled: its rounds land on both sides of the goal';
    const unreliable = rounds.some((r) => r.disturbed) ? ', unreliable: rounds marked † ran disturbed' : '';
    return `${times(middle)} (rounds ${list(rounds)}; goal ≤ ${limit}×: **${verdict}**${unreliable})`;
  };
  const addedTtft = (p: 'ttftP50Ms' | 'ttftP99Ms') => addedTtftIn(measurements, p);
  const lines: string[] = [];
  const contenders = [...new Set(measurements.map((m) => m.contender))].filter((c) => c.startsWith('gateway'));
  for (const c of contenders) {
    const runs = runsOf(c);
    const failed = runs.reduce((s, m) => s + failedStreams(m), 0);
    // Whole TTFT, as issue 29 measured it: the upstream sends its first token at once, so a
    // client's TTFT is what the path adds (nginx 33 ms at p99 there). Added TTFT is printed beside it.
    const nginx =
      runsOf('nginx').length > 0
        ? `${judged(
            ratios(c, 'nginx', (m) => m.summary.ttftP99Ms),
            GOALS.ttftP99TimesNginx,
          )}; added TTFT p99 ${list(ratios(c, 'nginx', addedTtft('ttftP99Ms'), true))}`
        : 'n/a (no nginx in this run)';
    lines.push(
      `- **${runs[0]!.label}, issue 29's goals**: no stream fails: **${failed === 0 ? 'met' : `not met (${failed} failed)`}**; TTFT p99 against nginx's ${nginx}; peak RSS against the floor's ${judged(
        ratios(c, 'floor', (m) => m.peakRssKiB),
        GOALS.rssTimesFloor,
      )}; CPU against the floor's ${judged(
        ratios(c, 'floor', (m) => m.cpu.serverPercent),
        GOALS.cpuTimesFloor,
      )}.`,
      `  Also against the floor (no goal): CPU per stream ${list(ratios(c, 'floor', cpuPerStream))} (counts when it started fewer streams than the floor); added TTFT p50 ${list(ratios(c, 'floor', addedTtft('ttftP50Ms'), true))}, p99 ${list(ratios(c, 'floor', addedTtft('ttftP99Ms'), true))}.`,
    );
  }
  return lines;
}

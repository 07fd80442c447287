// Results as Markdown: one dated section per run, newest at the top of bench/RESULTS.md, older
// sections kept below so before/after comparisons stay visible.
import { readFile, writeFile } from 'node:fs/promises';
import type { Mode } from './bodies.ts';
import type { CpuUse } from './cpu.ts';
import type { LoadResult } from './load.ts';
import type { Machine } from './system.ts';
import { trendBlock, type TrendRow } from './trend.ts';

export type GatewayId = 'gateway-plain' | 'gateway-full' | 'gateway-redis';
/** `…-before`: the same gateway variant run from an older checkout (`--before <dir>`), in the same rounds. */
export type ContenderId = 'direct' | 'nginx' | 'node' | 'fastify' | GatewayId | `${GatewayId}-before`;

export interface Measurement {
  /** The round it belongs to (1-based): every contender is measured once per round. */
  readonly round: number;
  readonly contender: ContenderId;
  readonly label: string;
  readonly mode: Mode;
  readonly result: LoadResult;
  /** Peak RSS of the process under test (master + workers for nginx), KiB. */
  readonly peakRssKiB: number | undefined;
  /** What the one-request check before the load found wrong, if anything. */
  readonly problem: string | undefined;
  /** CPU use during the measured run (the direct upstream's core is the load generator's too). */
  readonly cpu: CpuUse;
  /** Other processes used the CPU noticeably during the measured run. */
  readonly disturbed: boolean;
}

export interface RunInfo {
  readonly date: Date;
  readonly command: string;
  readonly machine: Machine;
  readonly revision: string;
  readonly upstream: string;
  readonly gateway: string;
  readonly load: string;
  readonly pinning: string;
  /** The Redis the gateway's Redis contender used, and what it cost; absent when not measured. */
  readonly redis: string | undefined;
  readonly notes: readonly string[];
}

const MODE_TITLES: Record<Mode, string> = {
  json: 'Non-streamed chat (`stream: false`, one JSON answer)',
  sse: 'Streamed chat (`stream: true`, SSE: 5 chunks + usage chunk + `[DONE]`)',
};

const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;
const added = (us: number) => `${us >= 0 ? '+' : '−'}${(Math.abs(us) / 1000).toFixed(2)} ms`;
const rps = (value: number) => Math.round(value).toLocaleString('en-US');
const pct = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)}%`);
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(1)} MiB`);

/** The middle value (the lower of the two middle ones for an even count); undefined for none. */
export function median(values: readonly number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Each contender's runs in one mode, in the order contenders were first measured. */
function byContender(measurements: readonly Measurement[], mode: Mode): Measurement[][] {
  const groups = new Map<ContenderId, Measurement[]>();
  for (const m of measurements) if (m.mode === mode) groups.set(m.contender, [...(groups.get(m.contender) ?? []), m]);
  return [...groups.values()];
}

/**
 * The server's CPU time per request, in µs: its CPU share over its throughput. Time the
 * hypervisor steals is not CPU time of the process, so this moves less with a noisy host than
 * req/s does (cache and memory contention still move it).
 */
function cpuPerRequestUs(m: Measurement): number | undefined {
  const percent = m.cpu.serverPercent;
  return percent === undefined || m.result.rps === 0 ? undefined : (percent / 100 / m.result.rps) * 1e6;
}

function perRequest(m: Measurement): string {
  const us = cpuPerRequestUs(m);
  return us === undefined ? 'n/a' : `${Math.round(us)} µs`;
}

/** The run whose throughput is the median of the contender's rounds: its row stands for them. */
function medianRun(runs: readonly Measurement[]): Measurement {
  const middle = median(runs.map((m) => m.result.rps))!;
  return runs.find((m) => m.result.rps === middle)!;
}

/**
 * One row per contender: the figures of its median round (by throughput), with every round's
 * throughput beside them. Added latency is against the upstream called directly in that round.
 */
export function table(measurements: readonly Measurement[], mode: Mode): string {
  const directByRound = new Map(measurements.filter((m) => m.mode === mode && m.contender === 'direct').map((m) => [m.round, m]));
  const lines = [
    '| Contender | req/s (median) | req/s per round | p50 | p99 | added p50 | added p99 | errors (non-2xx / socket) | peak RSS | server CPU | CPU per request | other load | steal |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const runs of byContender(measurements, mode)) {
    const m = medianRun(runs);
    const r = m.result;
    const direct = directByRound.get(m.round);
    const baseline = direct && m !== direct ? direct.result : undefined;
    const disturbed = runs.some((run) => run.disturbed);
    const errors = runs.reduce((sum, run) => [sum[0]! + run.result.statusErrors, sum[1]! + run.result.socketErrors], [0, 0]);
    lines.push(
      `| ${m.label}${disturbed ? ' †' : ''}${runs.some((run) => run.problem) ? ' ⚠' : ''} | ${rps(r.rps)} | ${runs.map((run) => rps(run.result.rps)).join(' · ')} | ${ms(r.p50Us)} | ${ms(r.p99Us)} | ${baseline ? added(r.p50Us - baseline.p50Us) : '—'} | ${baseline ? added(r.p99Us - baseline.p99Us) : '—'} | ${errors[0]} / ${errors[1]} | ${mib(m.peakRssKiB)} | ${pct(m.cpu.serverPercent)} | ${perRequest(m)} | ${pct(m.cpu.otherPercent)} | ${pct(m.cpu.stealPercent)} |`,
    );
  }
  return lines.join('\n');
}

export interface Ratio {
  /** The median of the rounds' ratios. */
  readonly median: number;
  /** Each round's ratio, in round order. */
  readonly rounds: readonly number[];
}

/**
 * A contender's req/s as % of another's (nginx proxy_pass by default) in a mode. Taken within
 * each round, whose runs are minutes apart at most, then the median of the rounds: the host's
 * speed drifts over a run more than the code's cost differs. Undefined without both.
 */
export function ratio(
  measurements: readonly Measurement[],
  mode: Mode,
  contender: ContenderId,
  base: ContenderId = 'nginx',
): Ratio | undefined {
  const rounds: number[] = [];
  for (const measured of measurements.filter((m) => m.mode === mode && m.contender === contender)) {
    const reference = measurements.find((m) => m.mode === mode && m.contender === base && m.round === measured.round);
    if (reference) rounds.push((100 * measured.result.rps) / reference.result.rps);
  }
  return rounds.length === 0 ? undefined : { median: median(rounds)!, rounds };
}

const percentOf = (r: Ratio) =>
  `${r.median.toFixed(1)}%${r.rounds.length > 1 ? ` (rounds: ${r.rounds.map((x) => `${x.toFixed(1)}%`).join(', ')})` : ''}`;

export const GOAL_PERCENT = 30;
/** The full path (budget, rate limits, ...) must keep this share of the pass-through throughput. */
export const FULL_PATH_GOAL_PERCENT = 70;

const GATEWAY_CONTENDERS = ['gateway-redis', 'gateway-full', 'gateway-plain'] as const;
const FULL_PATHS = [
  { contender: 'gateway-redis', name: 'Full path (Redis)' },
  { contender: 'gateway-full', name: 'Full path (memory)' },
] as const;

/**
 * The key ratios: each gateway variant's throughput as % of nginx proxy_pass's, then the full
 * path's (Redis, then memory) as % of the pass-through's, non-streamed and streamed.
 */
export function ratioLines(measurements: readonly Measurement[], markdown: boolean): string[] {
  const lines: string[] = [];
  const bold = (text: string) => (markdown ? `**${text}**` : text);
  const disturbed = (mode: Mode, ids: readonly ContenderId[]) =>
    measurements.some((m) => m.mode === mode && ids.includes(m.contender) && m.disturbed);
  for (const contender of GATEWAY_CONTENDERS) {
    const json = ratio(measurements, 'json', contender);
    if (json === undefined) continue;
    const label = measurements.find((m) => m.contender === contender)!.label;
    const sse = ratio(measurements, 'sse', contender);
    const unreliable = disturbed('json', [contender, 'nginx']);
    lines.push(
      `${bold(`${label}: throughput ${json.median.toFixed(1)}% of nginx proxy_pass, non-streamed chat`)} (median of the rounds' ratios; goal ≥ ${GOAL_PERCENT}%: ${json.median >= GOAL_PERCENT ? 'met' : 'not met'}${unreliable ? '; unreliable: a run it uses was disturbed †' : ''}; ${percentOf(json)})${sse === undefined ? '' : `; streamed chat ${percentOf(sse)}`}.`,
    );
  }
  if (lines.length === 0) lines.push('Gateway throughput as % of nginx proxy_pass throughput: n/a (nginx or the gateway not measured).');
  const floor = ratio(measurements, 'json', 'node');
  const nearFloor = ratio(measurements, 'json', 'gateway-plain', 'node');
  if (floor !== undefined) {
    lines.push(
      `${bold(`The floor, a bare Node proxy (node:http + undici, no framework or feature): ${floor.median.toFixed(1)}% of nginx proxy_pass, non-streamed chat`)} (${percentOf(floor)})${nearFloor === undefined ? '' : `; the pass-through reaches ${percentOf(nearFloor)} of it`}.`,
    );
  }
  // Each gateway against the bare Node proxy of the same round: the steadiest figure for a
  // before/after question, as no change to Tollgate moves the proxy (the pass-through, which the
  // full-path ratios below divide by, moved by up to 17% between runs of one tree).
  const againstFloor = GATEWAY_CONTENDERS.map((contender) => {
    const value = ratio(measurements, 'json', contender, 'node');
    const label = measurements.find((m) => m.contender === contender)?.label;
    return value === undefined || label === undefined ? undefined : `${label} ${percentOf(value)}`;
  }).filter((text): text is string => text !== undefined);
  if (againstFloor.length > 0) {
    lines.push(`${bold('Against the bare Node proxy, non-streamed chat (for before/after comparisons)')}: ${againstFloor.join('; ')}.`);
  }
  for (const { contender, name } of FULL_PATHS) {
    const verdict = (mode: Mode, value: Ratio) =>
      `goal ≥ ${FULL_PATH_GOAL_PERCENT}%: ${value.median >= FULL_PATH_GOAL_PERCENT ? 'met' : 'not met'}${disturbed(mode, [contender, 'gateway-plain']) ? '; unreliable: a run it uses was disturbed †' : ''}`;
    const json = ratio(measurements, 'json', contender, 'gateway-plain');
    const sse = ratio(measurements, 'sse', contender, 'gateway-plain');
    if (json === undefined && sse === undefined) continue;
    const jsonText = json === undefined ? 'n/a, non-streamed chat' : `${json.median.toFixed(1)}%, non-streamed chat`;
    lines.push(
      `${bold(`${name} as % of pass-through: ${jsonText}`)}${json === undefined ? '' : ` (${verdict('json', json)}; ${percentOf(json)})`}; streamed chat ${sse === undefined ? 'n/a' : `${percentOf(sse)} (${verdict('sse', sse)})`}.`,
    );
  }
  return lines;
}

/** Issue 29's goals: CPU per non-streamed request, as a multiple of the bare Node proxy's. */
export const CPU_GOALS: Partial<Record<ContenderId, number>> = { 'gateway-plain': 1.25, 'gateway-redis': 1.6 };

/**
 * `contender`'s CPU per request as a multiple of `base`'s in the same round, the median of the
 * rounds. CPU time moves less with the host's speed than req/s does (stolen time is no one's).
 */
export function cpuRatio(measurements: readonly Measurement[], mode: Mode, contender: ContenderId, base: ContenderId): Ratio | undefined {
  const rounds: number[] = [];
  for (const measured of measurements.filter((m) => m.mode === mode && m.contender === contender)) {
    const reference = measurements.find((m) => m.mode === mode && m.contender === base && m.round === measured.round);
    const [a, b] = [cpuPerRequestUs(measured), reference && cpuPerRequestUs(reference)];
    if (a !== undefined && b !== undefined && b > 0) rounds.push(a / b);
  }
  return rounds.length === 0 ? undefined : { median: median(rounds)!, rounds };
}

const timesOf = (r: Ratio) => `${r.median.toFixed(2)}x (rounds: ${r.rounds.map((x) => `${x.toFixed(2)}x`).join(', ')})`;

/** CPU per non-streamed request against the bare Node proxy: the framework alone, then each gateway variant, with issue 29's goals. */
export function cpuLines(measurements: readonly Measurement[], markdown: boolean): string[] {
  const parts: string[] = [];
  for (const contender of ['fastify', ...[...GATEWAY_CONTENDERS].reverse()] as const) {
    const value = cpuRatio(measurements, 'json', contender, 'node');
    const label = measurements.find((m) => m.contender === contender)?.label;
    if (value === undefined || label === undefined) continue;
    const goal = CPU_GOALS[contender];
    const verdict =
      goal === undefined
        ? ''
        : `, goal ≤ ${goal}x: ${value.rounds.every((x) => x <= goal) ? 'met' : value.median <= goal ? 'met at the median, not in every round' : 'not met'}`;
    parts.push(`${label} ${timesOf(value)}${verdict}`);
  }
  if (parts.length === 0) return [];
  const title = 'CPU per non-streamed request, as a multiple of the bare Node proxy in the same round';
  return [`${markdown ? `**${title}**` : title}: ${parts.join('; ')}.`];
}

/** The run's row of the trend table (trend.ts). */
export function trendRow(measurements: readonly Measurement[], date: Date, revision: string): TrendRow {
  const of = (contender: ContenderId) => cpuRatio(measurements, 'json', contender, 'node')?.median;
  const floor = median(measurements.filter((m) => m.mode === 'json' && m.contender === 'node').flatMap((m) => cpuPerRequestUs(m) ?? []));
  return {
    date,
    revision: revision.split(';')[0]!,
    floorUs: floor,
    fastify: of('fastify'),
    plain: of('gateway-plain'),
    full: of('gateway-full'),
    redis: of('gateway-redis'),
  };
}

/**
 * With `--before`: each gateway variant against itself run from the older checkout, in the same
 * rounds and back to back (the pair is adjacent in every round's order), so the host's drift,
 * which moves a figure by more than a change does between two runs minutes apart, touches both
 * alike. Per mode: CPU per request after as % of before (the median of the rounds' ratios, each
 * round's beside it) and throughput likewise. A figure is called worse or better only when every
 * round agrees; otherwise the difference is within the rounds' spread.
 */
export function beforeAfterLines(measurements: readonly Measurement[], markdown: boolean): string[] {
  const lines: string[] = [];
  const bold = (text: string) => (markdown ? `**${text}**` : text);
  for (const contender of [...GATEWAY_CONTENDERS].reverse()) {
    const before = `${contender}-before` as const;
    const parts: string[] = [];
    for (const mode of ['json', 'sse'] as const) {
      const cpu: number[] = [];
      const throughput: number[] = [];
      for (const after of measurements.filter((m) => m.mode === mode && m.contender === contender)) {
        const then = measurements.find((m) => m.mode === mode && m.contender === before && m.round === after.round);
        if (!then) continue;
        const [a, b] = [cpuPerRequestUs(after), cpuPerRequestUs(then)];
        if (a !== undefined && b !== undefined) cpu.push((100 * a) / b);
        throughput.push((100 * after.result.rps) / then.result.rps);
      }
      if (cpu.length === 0) continue;
      const verdict = cpu.every((x) => x > 100)
        ? 'higher in every round'
        : cpu.every((x) => x < 100)
          ? 'lower in every round'
          : "within the rounds' spread";
      const list = (values: number[]) => values.map((x) => `${x.toFixed(0)}%`).join(', ');
      parts.push(
        `${mode === 'json' ? 'non-streamed' : 'streamed'}: CPU per request ${median(cpu)!.toFixed(1)}% of before (${verdict}; rounds: ${list(cpu)}), throughput ${median(throughput)!.toFixed(1)}% (rounds: ${list(throughput)})`,
      );
    }
    const label = measurements.find((m) => m.contender === contender)?.label;
    if (parts.length > 0 && label) lines.push(`${bold(`Before/after, ${label}`)}: ${parts.join('; ')}.`);
  }
  return lines;
}

export function section(info: RunInfo, measurements: readonly Measurement[]): string {
  const m = info.machine;
  const problems = measurements
    .filter((x) => x.problem)
    .map((x) => `${x.label}, ${x.mode === 'json' ? 'non-streamed' : 'streamed'}: ${x.problem}`);
  const out = [
    `## ${info.date
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')}`,
    '',
    `- Command: \`${info.command}\``,
    `- Revision: ${info.revision}`,
    `- Machine: ${m.cores} cores (\`nproc\`), ${m.cpu}, ${m.memory} memory, ${m.kernel}`,
    `- Software: Node ${m.node}, nginx ${m.nginx}, ${m.wrk}, Redis ${m.redis}`,
    `- Upstream: ${info.upstream}`,
    `- Gateway: ${info.gateway}`,
    `- Load: ${info.load}`,
    `- Pinning: ${info.pinning}`,
    ...(info.redis ? [`- Redis: ${info.redis}`] : []),
    ...info.notes.map((note) => `- Note: ${note}`),
    ...problems.map((p) => `- ⚠ Check before load failed: ${p}`),
    '',
  ];
  for (const mode of ['json', 'sse'] as const) {
    out.push(`### ${MODE_TITLES[mode]}`, '', table(measurements, mode), '');
  }
  out.push([...cpuLines(measurements, true), ...ratioLines(measurements, true)].join('\n'));
  const compared = beforeAfterLines(measurements, true);
  if (compared.length > 0) out.push('', compared.join('\n'));
  out.push('');
  return out.join('\n');
}

const HEADER = `# Benchmark results

Produced by \`npm run bench\` (see [README.md](README.md) for the method). Newest run first; older
runs stay below for before/after comparisons. Added latency is the contender's p50/p99 minus the
upstream called directly in the same run (the same round, in runs with rounds).
`;

/** Puts `text` at the top of the results file, below its header, keeping older sections. */
export async function prependSection(file: string, text: string): Promise<void> {
  let existing = '';
  try {
    existing = await readFile(file, 'utf8');
  } catch {
    // First run.
  }
  // The trend table (trend.ts) stays on top, above every section.
  const trend = trendBlock(existing);
  const first = existing.indexOf('\n## ', trend === undefined ? 0 : existing.indexOf(trend) + trend.length);
  const older = first >= 0 ? existing.slice(first + 1) : '';
  await writeFile(file, `${HEADER}\n${trend ?? ''}\n${text}\n${older}`.replace(/\n{3,}/g, '\n\n'));
}

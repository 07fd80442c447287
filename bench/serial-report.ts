// The results of `npm run bench -- --serial` (latency at concurrency one) as Markdown: per
// contender its p50 and p99 and the *added* p50 and p99 (the contender's minus the upstream called
// directly in the same round), each the median of the rounds with every round's value beside; then
// issue 29's goals, judged on those medians, and with `--before` each gateway variant against its
// older twin of the same rounds.
import type { ContenderId } from './report.ts';
import { median } from './report.ts';
import type { CpuUse } from './cpu.ts';
import type { WindowResult } from './serial-client.ts';

export interface SerialMeasurement {
  /** 1-based; every contender is measured once per round. */
  readonly round: number;
  readonly contender: ContenderId;
  readonly label: string;
  readonly result: WindowResult;
  /** What the one-request check before the window found wrong, if anything. */
  readonly problem: string | undefined;
  readonly cpu: CpuUse;
  /** Other processes (or the hypervisor) took the CPU noticeably during the window. */
  readonly disturbed: boolean;
}

/** Issue 29: all features on Redis may add at most this much more p50 than the bare Node proxy adds. */
export const ADDED_P50_ABOVE_FLOOR_US = 150;
/** Issue 29: ... and at most this many times the bare Node proxy's added p99. */
export const ADDED_P99_TIMES_FLOOR = 2;

interface Added {
  readonly round: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

const ms = (us: number | undefined, digits = 3) => (us === undefined ? 'n/a' : `${(us / 1000).toFixed(digits)}`);
const signed = (us: number | undefined, digits = 3) => (us === undefined ? 'n/a' : `${us >= 0 ? '+' : '−'}${ms(Math.abs(us), digits)}`);
/** a / b when b is above 0; a multiple of a latency that is not above the baseline means nothing. */
const times = (a: number, b: number) => (b > 0 ? a / b : undefined);
const multiple = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(2)}×`);
const list = (values: readonly number[], format: (v: number) => string) => values.map((v) => format(v)).join(' · ');

/** Each contender's windows, in the order contenders were first measured. */
function byContender(measurements: readonly SerialMeasurement[]): SerialMeasurement[][] {
  const groups = new Map<ContenderId, SerialMeasurement[]>();
  for (const m of measurements) groups.set(m.contender, [...(groups.get(m.contender) ?? []), m]);
  return [...groups.values()];
}

/** The contender's latency minus the upstream's called directly, round by round (rounds with both). */
export function added(measurements: readonly SerialMeasurement[], contender: ContenderId): Added[] {
  const rows: Added[] = [];
  for (const m of measurements.filter((x) => x.contender === contender)) {
    const direct = measurements.find((x) => x.contender === 'direct' && x.round === m.round);
    if (direct) rows.push({ round: m.round, p50Us: m.result.p50Us - direct.result.p50Us, p99Us: m.result.p99Us - direct.result.p99Us });
  }
  return rows;
}

/** One row per contender: medians over the rounds (ms), every round's value beside. */
export function serialTable(measurements: readonly SerialMeasurement[]): string {
  const lines = [
    '| Contender | p50 | p99 | added p50 | added p99 | p50 per round | p99 per round | added p50 per round | added p99 per round | requests (errors) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const runs of byContender(measurements)) {
    const first = runs[0]!;
    const p50 = runs.map((m) => m.result.p50Us);
    const p99 = runs.map((m) => m.result.p99Us);
    const more = first.contender === 'direct' ? undefined : added(measurements, first.contender);
    const addedP50 = more?.map((a) => a.p50Us);
    const addedP99 = more?.map((a) => a.p99Us);
    const marks = `${runs.some((m) => m.disturbed) ? ' †' : ''}${runs.some((m) => m.problem) ? ' ⚠' : ''}`;
    const requests = runs.reduce((sum, m) => sum + m.result.requests, 0);
    const errors = runs.reduce((sum, m) => sum + m.result.errors, 0);
    const cells = [
      `${first.label}${marks}`,
      ms(median(p50)),
      ms(median(p99)),
      addedP50 ? signed(median(addedP50)) : '—',
      addedP99 ? signed(median(addedP99)) : '—',
      list(p50, (v) => ms(v, 2)),
      list(p99, (v) => ms(v, 2)),
      addedP50 ? list(addedP50, (v) => signed(v, 2)) : '—',
      addedP99 ? list(addedP99, (v) => signed(v, 2)) : '—',
      `${requests.toLocaleString('en-US')} (${errors})`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * Issue 29's two figures for a gateway variant against the bare Node proxy: its added p50 above
 * the proxy's, and its added p99 as a multiple of the proxy's, each on the medians of the rounds;
 * the rounds' own values beside, for their spread. With `goal`, the verdict too.
 */
function againstFloor(measurements: readonly SerialMeasurement[], contender: ContenderId, goal: boolean, bold: (s: string) => string) {
  const gateway = added(measurements, contender);
  const floor = added(measurements, 'node');
  const label = measurements.find((m) => m.contender === contender)?.label;
  if (gateway.length === 0 || floor.length === 0 || label === undefined) return [];
  const [g50, g99] = [median(gateway.map((a) => a.p50Us))!, median(gateway.map((a) => a.p99Us))!];
  const [f50, f99] = [median(floor.map((a) => a.p50Us))!, median(floor.map((a) => a.p99Us))!];
  const rounds = gateway.flatMap((g) => {
    const f = floor.find((x) => x.round === g.round);
    return f ? [{ above: g.p50Us - f.p50Us, times: times(g.p99Us, f.p99Us) }] : [];
  });
  const disturbed = measurements.some(
    (m) => (m.contender === contender || m.contender === 'node' || m.contender === 'direct') && m.disturbed,
  );
  const verdict = (goalText: string, met: boolean, kept: number) =>
    goal
      ? `goal ${goalText}: ${met ? 'met' : 'not met'}, in ${kept} of ${rounds.length} rounds${disturbed ? '; unreliable: a window it uses was disturbed †' : ''}; `
      : 'no goal; ';
  const p50Met = g50 - f50 <= ADDED_P50_ABOVE_FLOOR_US;
  const p99Times = times(g99, f99);
  // With the proxy adding nothing at p99 (a noisy direct p99 can exceed it) there is no multiple to judge.
  const p99Met = p99Times !== undefined && p99Times <= ADDED_P99_TIMES_FLOOR;
  const p50Kept = rounds.filter((r) => r.above <= ADDED_P50_ABOVE_FLOOR_US).length;
  const p99Kept = rounds.filter((r) => r.times !== undefined && r.times <= ADDED_P99_TIMES_FLOOR).length;
  return [
    `${bold(`${label}, added p50 ${signed(g50)} ms against the bare Node proxy's ${signed(f50)} ms: ${signed(g50 - f50)} ms above it`)} (${verdict(`≤ +${ms(ADDED_P50_ABOVE_FLOOR_US, 2)} ms above`, p50Met, p50Kept)}each round's difference: ${list(
      rounds.map((r) => r.above),
      (v) => signed(v),
    )} ms).`,
    `${bold(`${label}, added p99 ${signed(g99)} ms against the bare Node proxy's ${signed(f99)} ms: ${p99Times === undefined ? 'no multiple, the proxy adds nothing at p99' : `${multiple(p99Times)} it`}`)} (${verdict(`≤ ${ADDED_P99_TIMES_FLOOR}×`, p99Met, p99Kept)}each round's multiple: ${rounds.map((r) => multiple(r.times)).join(' · ')}).`,
  ];
}

/** Issue 29's goals for all features on Redis, and the same figures for the pass-through (no goal). */
export function serialGoalLines(measurements: readonly SerialMeasurement[], markdown: boolean): string[] {
  const bold = (text: string) => (markdown ? `**${text}**` : text);
  const lines = [...againstFloor(measurements, 'gateway-redis', true, bold), ...againstFloor(measurements, 'gateway-plain', false, bold)];
  return lines.length > 0 ? lines : ['Added latency against the bare Node proxy: n/a (the proxy or the gateway was not measured).'];
}

/**
 * With `--before`: each gateway variant's added p50 and p99 minus its older twin's in the same
 * round (the pair is measured back to back), the median of the rounds with each round's beside;
 * called higher or lower only when every round agrees.
 */
export function serialBeforeAfterLines(measurements: readonly SerialMeasurement[], markdown: boolean): string[] {
  const bold = (text: string) => (markdown ? `**${text}**` : text);
  const lines: string[] = [];
  for (const contender of ['gateway-plain', 'gateway-redis'] as const) {
    const after = added(measurements, contender);
    const before = added(measurements, `${contender}-before`);
    const label = measurements.find((m) => m.contender === contender)?.label;
    if (before.length === 0 || label === undefined) continue;
    const parts = (['p50Us', 'p99Us'] as const).map((key) => {
      const differences = after.flatMap((a) => {
        const b = before.find((x) => x.round === a.round);
        return b ? [a[key] - b[key]] : [];
      });
      const verdict = differences.every((d) => d > 0)
        ? 'higher in every round'
        : differences.every((d) => d < 0)
          ? 'lower in every round'
          : "within the rounds' spread";
      return `added ${key.slice(0, 3)} ${signed(median(differences))} ms against before (${verdict}; rounds: ${list(differences, signed)})`;
    });
    lines.push(`${bold(`Before/after, ${label}`)}: ${parts.join('; ')}.`);
  }
  return lines;
}

export interface SerialRunInfo {
  readonly heading: string;
  /** `- Key: value` lines under the heading (command, revision, machine, method, notes). */
  readonly facts: readonly string[];
}

export function serialSection(info: SerialRunInfo, measurements: readonly SerialMeasurement[]): string {
  const problems = [...new Set(measurements.filter((m) => m.problem).map((m) => `${m.label}: ${m.problem}`))];
  return [
    `## ${info.heading}`,
    '',
    ...info.facts.map((fact) => `- ${fact}`),
    ...problems.map((p) => `- ⚠ Check before the window failed: ${p}`),
    '',
    'Latency in ms, each the median of the rounds; *added* is the contender minus the upstream called directly in the same round.',
    '',
    serialTable(measurements),
    '',
    serialGoalLines(measurements, true).join('\n'),
    ...(measurements.some((m) => m.contender.endsWith('-before')) ? ['', serialBeforeAfterLines(measurements, true).join('\n')] : []),
    '',
  ].join('\n');
}

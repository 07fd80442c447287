// The trend at the top of bench/RESULTS.md: one row per throughput run, the gateway's CPU per
// non-streamed request as a multiple of the bare Node proxy's measured in the same rounds. A
// feature that costs 2% hides in any one run's spread; ten of them show here before they add up
// (from 1.1x to 2x in four days, issue 29). Newest row first; the rows stay when sections are
// added below (report.ts prependSection keeps what precedes the first section).
import { readFile, writeFile } from 'node:fs/promises';

/** Marks the table in the preamble, so that it is found and rewritten in place. */
const START = '<!-- trend:start -->';
const END = '<!-- trend:end -->';
const TITLE = '## Trend: CPU per non-streamed request, as a multiple of the bare Node proxy in the same run';
const INTRO =
  "Medians of the rounds' ratios (`npm run bench`; rows before 2026-11-27 are read from each section's median-round table, whose ratio of medians is close to but not the median of ratios). Goals (issue 29): pass-through at most 1.25x, all features on Redis at most 1.6x. The *bare Fastify proxy* is what the framework costs over node:http doing the same (from 2026-11-27).";
const HEAD =
  '| Run (UTC) | Commit | Bare Node proxy, µs | Bare Fastify proxy | Pass-through | All features (memory) | All features (Redis) |\n|---|---|---:|---:|---:|---:|---:|';

export interface TrendRow {
  readonly date: Date;
  /** The commit, as the run's section gives it. */
  readonly revision: string;
  /** CPU per request of the floor, µs (median round). */
  readonly floorUs: number | undefined;
  /** Multiples of the floor's CPU per request, medians of the rounds' ratios. */
  readonly fastify: number | undefined;
  readonly plain: number | undefined;
  readonly full: number | undefined;
  readonly redis: number | undefined;
}

/** The trend table of a RESULTS.md text, markers included; undefined when it has none. */
export function trendBlock(text: string): string | undefined {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  return start >= 0 && end > start ? text.slice(start, end + END.length) : undefined;
}

/** Rows kept: the trend of the last few days, not the whole history (the sections below keep it). */
const MAX_ROWS = 30;

const times = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(2)}x`);

function rowText(row: TrendRow): string {
  const when = row.date.toISOString().slice(0, 16).replace('T', ' ');
  const floor = row.floorUs === undefined ? '—' : Math.round(row.floorUs).toString();
  return `| ${when} | ${row.revision} | ${floor} | ${times(row.fastify)} | ${times(row.plain)} | ${times(row.full)} | ${times(row.redis)} |`;
}

/** Adds `row` on top of the trend table in `file`'s preamble (made if missing). */
export async function recordTrend(file: string, row: TrendRow): Promise<void> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const existing = trendBlock(text);
  if (existing !== undefined) {
    const start = text.indexOf(existing);
    const end = start + existing.length;
    const block = existing.slice(START.length, existing.length - END.length);
    const headAt = block.indexOf(HEAD);
    const kept =
      headAt >= 0
        ? block
            .slice(headAt + HEAD.length)
            .trim()
            .split('\n')
            .filter((line) => line.startsWith('|'))
        : [];
    const rows = kept.slice(0, MAX_ROWS - 1).join('\n');
    const table = `${START}\n${TITLE}\n\n${INTRO}\n\n${HEAD}\n${rowText(row)}${rows === '' ? '' : `\n${rows}`}\n${END}`;
    await writeFile(file, text.slice(0, start) + table + text.slice(end));
    return;
  }
  // No table yet: it goes before the first section.
  const first = text.indexOf('\n## ');
  const table = `${START}\n${TITLE}\n\n${INTRO}\n\n${HEAD}\n${rowText(row)}\n${END}\n`;
  const at = first >= 0 ? first + 1 : text.length;
  await writeFile(file, `${text.slice(0, at)}${table}\n${text.slice(at)}`);
}

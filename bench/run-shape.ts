// What every benchmark of `npm run bench` shares: the shape of a run read from BENCH_*
// variables, the older checkout of `--before` (the throughput run and --serial), and what the
// entry (bench/run.ts) hands to the benchmarks that run apart (--llm, --queue, --idle-rss).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Child } from './processes.ts';

/** A positive integer from the environment variable `name`, or `fallback`; anything else stops the run. */
export function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/**
 * `--before <dir>`: a checkout of older code (a `git worktree` of the commit before a change,
 * with its node_modules), whose gateway variants run beside this tree's in the same rounds.
 */
export function beforeCheckout(): string | undefined {
  const { before: dir } = parseArgs({ options: { before: { type: 'string' } }, strict: false }).values;
  const before = typeof dir === 'string' ? resolve(dir) : undefined;
  if (before !== undefined && !existsSync(join(before, 'bin/tollgate.ts'))) throw new Error(`--before ${before}: no bin/tollgate.ts there`);
  return before;
}

/** What bench/run.ts gives a benchmark that runs on its own. */
export interface BenchHelpers {
  readonly root: string;
  /** The Node binary the processes under test run on (the project's pinned one when installed). */
  readonly node: string;
  /** The revision of the tree at `root` (this one by default), with a mark when it has changes. */
  readonly gitRevision: (root?: string) => Promise<string>;
  readonly waitReady: (url: string, child: Child) => Promise<void>;
  readonly log: (line: string) => void;
}

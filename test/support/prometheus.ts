// A real Prometheus (Debian's package) for the tests of the dashboard and the alerts: it scrapes
// the given targets every second, evaluates the given rule files every second, and answers
// instant queries and the alerts' state over its HTTP API. Its data lives in a temporary
// directory, gone with stop().
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { findOnPath } from './executables.ts';
import { freePort } from './free-port.ts';
import { spawnOwned } from './owned-process.ts';
import { PROCESS_START_MS } from './patience.ts';

export interface PrometheusOptions {
  /** host:port of each process to scrape (/metrics), labelled by Prometheus with `instance`. */
  readonly targets: readonly string[];
  readonly ruleFiles?: readonly string[];
}

const Sample = z.object({ metric: z.record(z.string(), z.string()), value: z.tuple([z.number(), z.string()]) });
export type Sample = z.infer<typeof Sample>;
const QueryAnswer = z.discriminatedUnion('status', [
  z.object({ status: z.literal('success'), data: z.object({ resultType: z.string(), result: z.array(Sample) }) }),
  z.object({ status: z.literal('error'), error: z.string() }),
]);
const RangeSeries = z.object({ metric: z.record(z.string(), z.string()), values: z.array(z.tuple([z.number(), z.string()])) });
export type RangeSeries = z.infer<typeof RangeSeries>;
const RangeAnswer = z.discriminatedUnion('status', [
  z.object({ status: z.literal('success'), data: z.object({ result: z.array(RangeSeries) }) }),
  z.object({ status: z.literal('error'), error: z.string() }),
]);
const Alert = z.object({ labels: z.record(z.string(), z.string()), state: z.enum(['pending', 'firing', 'inactive']) });
export type ActiveAlert = z.infer<typeof Alert>;
const AlertsAnswer = z.object({ status: z.literal('success'), data: z.object({ alerts: z.array(Alert) }) });
const TargetsAnswer = z.object({
  data: z.object({ activeTargets: z.array(z.object({ scrapeUrl: z.string(), health: z.string(), lastScrape: z.string() })) }),
});

export interface RunningPrometheus {
  readonly url: string;
  /** An instant query: its samples (an error of the query throws, with Prometheus' message). */
  query(expr: string): Promise<Sample[]>;
  /** A range query from `start` to `end` (seconds since the epoch) every `step` seconds. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<RangeSeries[]>;
  /** The alerts pending or firing now. */
  alerts(): Promise<ActiveAlert[]>;
  /** Whether every target has been scraped, and answered, since `since` (ms). */
  scrapedSince(since: number): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const binary = findOnPath('prometheus');
  if (!binary)
    throw new Error('prometheus is not installed: run `apt-get install prometheus` (or `bash test/support/install-system-deps.sh`)');
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: [{ job_name: 'tollgate', static_configs: [{ targets: options.targets }] }],
  };
  // JSON is YAML.
  await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const child: ChildProcess = spawnOwned(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Series that stop being scraped go stale at once, not after 5 minutes.
      '--query.lookback-delta=5s',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const get = async (path: string) => {
    const response = await fetch(`${url}${path}`);
    return response.json();
  };
  // Ready once it answers /-/ready (it replays its empty WAL first); it dying, or not getting
  // there in time, is an error with its output.
  const deadline = Date.now() + PROCESS_START_MS;
  for (;;) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus ${child.exitCode === null ? 'was not ready in time' : 'exited at start'}:\n${output.join('')}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    url,
    async query(expr) {
      const answer = QueryAnswer.parse(await get(`/api/v1/query?query=${encodeURIComponent(expr)}`));
      if (answer.status === 'error') throw new Error(`${expr}: ${answer.error}`);
      return answer.data.result;
    },
    async queryRange(expr, start, end, step) {
      const answer = RangeAnswer.parse(
        await get(`/api/v1/query_range?query=${encodeURIComponent(expr)}&start=${start}&end=${end}&step=${step}`),
      );
      if (answer.status === 'error') throw new Error(`${expr}: ${answer.error}`);
      return answer.data.result;
    },
    async alerts() {
      return AlertsAnswer.parse(await get('/api/v1/alerts')).data.alerts;
    },
    async scrapedSince(since) {
      const targets = TargetsAnswer.parse(await get('/api/v1/targets')).data.activeTargets;
      return targets.length === options.targets.length && targets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > since);
    },
    stop,
  };
}

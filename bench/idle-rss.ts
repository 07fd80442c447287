// `npm run bench -- --idle-rss`: the resident memory of a gateway that serves nothing (file mode,
// in-memory store, the example configuration), beside a bare Node process running plain
// JavaScript and one running a TypeScript file (Node's type stripping loads a module of its own),
// so the figure says how much is the gateway's. Each process is sampled (VmRSS) once a second for
// SAMPLES seconds after it is ready and has settled; the median is reported. Issue 13's goal: at
// most 120 MB idle in file mode.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchHelpers } from './run-shape.ts';
import { startPinned, stop, type Child, gatewayArgs } from './processes.ts';
import { median, prependSection } from './report.ts';
import { describeMachine, ensureTools, freePort } from './system.ts';

/** Seconds sampled per process, after SETTLE_SECONDS of quiet. */
const SAMPLES = 10;
const SETTLE_SECONDS = 5;
const GOAL_MB = 120;

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]);
}

/** The median RSS of `child` over SAMPLES one-second samples, after it settled; in MiB. */
async function idleRss(child: Child): Promise<{ median: number; min: number; max: number }> {
  await sleep(SETTLE_SECONDS * 1000);
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    samples.push((await rssKiB(child.pid)) / 1024);
    await sleep(1000);
  }
  return { median: median(samples)!, min: Math.min(...samples), max: Math.max(...samples) };
}

export async function runIdleRss(helpers: BenchHelpers): Promise<void> {
  const { root, node, log } = helpers;
  const started = new Date();
  const machine = await describeMachine(ensureTools());
  const scratch = join(tmpdir(), `tollgate-idle-rss-${process.pid}`);
  await mkdir(scratch, { recursive: true });
  const idleJs = join(scratch, 'idle.mjs');
  const idleTs = join(scratch, 'idle.ts');
  const idle = 'setInterval(() => {}, 1000);\n';
  await writeFile(idleJs, idle);
  await writeFile(idleTs, idle);

  const rows: { label: string; rss: { median: number; min: number; max: number } }[] = [];
  for (const [label, file] of [
    ['bare Node process, plain JavaScript', idleJs],
    ['bare Node process, a TypeScript file', idleTs],
  ] as const) {
    const child = startPinned(label, 0, node, [file], join(scratch, 'bare.log'));
    rows.push({ label, rss: await idleRss(child) });
    await stop(child);
  }
  // The gateway as the tests and `npm run tollgate` run it (the TypeScript sources), and as `npm start`
  // and the image run it (dist/app, compiled by npm run build, which this builds first).
  const build = spawnSync(node, [join(root, 'bin/build-app.ts')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build (bin/build-app.ts) failed');
  for (const [label, cli] of [
    ['Tollgate gateway, file mode, idle: from the sources (bin/tollgate.ts)', join(root, 'bin/tollgate.ts')],
    ['Tollgate gateway, file mode, idle: compiled, as `npm start` and the image run it (dist/app)', join(root, 'dist/app/bin/tollgate.js')],
  ] as const) {
    const port = await freePort();
    const args = gatewayArgs(root, join(root, 'examples/config.yaml'), port);
    args[0] = cli;
    const gateway = startPinned('gateway', 0, node, args, join(scratch, 'gateway.log'), { ...process.env, NODE_ENV: 'production' });
    await helpers.waitReady(`http://127.0.0.1:${port}/readyz`, gateway);
    rows.push({ label, rss: await idleRss(gateway) });
    await stop(gateway);
  }

  const gatewayMb = (rows.at(-1)!.rss.median * 1048576) / 1e6;
  const mib = (n: number) => `${n.toFixed(1)} MiB`;
  const text = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: idle RSS in file mode`,
    '',
    '- Command: `npm run bench -- --idle-rss`',
    `- Revision: ${await helpers.gitRevision()}`,
    `- Machine: ${machine.cores} cores, ${machine.cpu}, ${machine.memory}, ${machine.kernel}; Node ${machine.node}`,
    `- Method: each process alone on core 0, ${SETTLE_SECONDS} s to settle after it is ready, then VmRSS once a second for ${SAMPLES} s; the gateway runs \`gateway --config examples/config.yaml\` (in-memory store), serving nothing, from the sources and compiled`,
    '',
    '| Process | RSS (median) | min | max |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((row) => `| ${row.label} | ${mib(row.rss.median)} | ${mib(row.rss.min)} | ${mib(row.rss.max)} |`),
    '',
    `**Idle RSS in file mode, as \`npm start\` and the image run the gateway: ${gatewayMb.toFixed(0)} MB** (goal ≤ ${GOAL_MB} MB: ${gatewayMb <= GOAL_MB ? 'met' : 'not met'}).`,
    '',
  ].join('\n');
  await prependSection(join(root, 'bench', 'RESULTS.md'), text);
  log(text);
}

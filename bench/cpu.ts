// CPU time around a measured run, from /proc: how much CPU the server under test used (a server
// near 100% of its core is CPU-bound), how much other processes on the machine used (anything
// well above 0 means the figures were disturbed), and how much the hypervisor stole.
import { readdir, readFile } from 'node:fs/promises';

/** Linux reports process times in USER_HZ ticks, 100 per second on every common platform. */
const TICKS_PER_SECOND = 100;

interface ProcessTimes {
  readonly ppid: number;
  readonly ticks: number;
}

export interface CpuSnapshot {
  readonly at: number;
  readonly processes: Map<number, ProcessTimes>;
  /** user + nice + system ticks of all cores: time spent running processes. */
  readonly busy: number;
  /** CPU ticks of this process's children that ended and were waited for (wrk runs). */
  readonly reaped: number;
  readonly steal: number;
  readonly total: number;
}

export async function cpuSnapshot(): Promise<CpuSnapshot> {
  const processes = new Map<number, ProcessTimes>();
  let steal = 0;
  let total = 0;
  let busy = 0;
  let reaped = 0;
  try {
    const stat = await readFile('/proc/stat', 'utf8');
    const fields = /^cpu +(.+)$/m.exec(stat)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    // user nice system idle iowait irq softirq steal (guest times are inside user).
    total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    steal = fields[7] ?? 0;
    busy = (fields[0] ?? 0) + (fields[1] ?? 0) + (fields[2] ?? 0);
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const text = await readFile(`/proc/${entry}/stat`, 'utf8');
        const after = text.slice(text.lastIndexOf(')') + 2).split(' ');
        processes.set(Number(entry), { ppid: Number(after[1]), ticks: Number(after[11]) + Number(after[12]) });
        if (Number(entry) === process.pid) reaped = Number(after[13]) + Number(after[14]);
      } catch {
        // The process ended meanwhile.
      }
    }
  } catch {
    // Not Linux: no figures.
  }
  return { at: performance.now(), processes, busy, reaped, steal, total };
}

export interface CpuUse {
  /** CPU used by the server under test (with its child processes), in % of one core. */
  readonly serverPercent: number | undefined;
  /** CPU used by processes outside this benchmark's process tree, in % of one core (±5: ticks). */
  readonly otherPercent: number | undefined;
  /** Share of all cores' time stolen by the hypervisor, in percent. */
  readonly stealPercent: number | undefined;
}

/** Pids of `root` and everything below it in `processes`. */
function tree(root: number, processes: Map<number, ProcessTimes>): Set<number> {
  const found = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, { ppid }] of processes) {
      if (!found.has(pid) && found.has(ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return found;
}

export function cpuUse(before: CpuSnapshot, after: CpuSnapshot, serverPid: number): CpuUse {
  if (after.processes.size === 0) return { serverPercent: undefined, otherPercent: undefined, stealPercent: undefined };
  const seconds = (after.at - before.at) / 1000;
  const ours = tree(process.pid, after.processes);
  const server = tree(serverPid, after.processes);
  let serverTicks = 0;
  let ourTicks = after.reaped - before.reaped;
  for (const [pid, now] of after.processes) {
    // A process that started during the run counts from zero.
    const used = now.ticks - (before.processes.get(pid)?.ticks ?? 0);
    if (server.has(pid)) serverTicks += used;
    if (ours.has(pid)) ourTicks += used;
  }
  // Everything the cores ran that was not this benchmark's process tree, short-lived processes
  // included (interrupt time is left out: much of it is this benchmark's own loopback traffic).
  const otherTicks = Math.max(0, after.busy - before.busy - ourTicks);
  const percent = (ticks: number) => (100 * ticks) / TICKS_PER_SECOND / seconds;
  return {
    serverPercent: percent(serverTicks),
    otherPercent: percent(otherTicks),
    stealPercent: after.total > before.total ? (100 * (after.steal - before.steal)) / (after.total - before.total) : undefined,
  };
}

/** Over `ms`: CPU used by processes outside this benchmark's tree, and the hypervisor's steal. */
export async function otherLoad(ms = 1000): Promise<Pick<CpuUse, 'otherPercent' | 'stealPercent'>> {
  const before = await cpuSnapshot();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return cpuUse(before, await cpuSnapshot(), process.pid);
}

/**
 * One measured run of a CPU-per-request bench (--dialects, --tracing): `load` once for
 * `warmupSeconds` (discarded), then again for `seconds` with the CPU of process `pid` taken over
 * it. Returns the run, its CPU use and the process's CPU µs per request answered.
 */
export async function cpuPerRequest<R extends { readonly rps: number }>(
  load: (seconds: number, warmup: boolean) => Promise<R>,
  pid: number,
  warmupSeconds: number,
  seconds: number,
): Promise<{ result: R; cpu: CpuUse; micros: number }> {
  await load(warmupSeconds, true);
  const before = await cpuSnapshot();
  const result = await load(seconds, false);
  const cpu = cpuUse(before, await cpuSnapshot(), pid);
  return { result, cpu, micros: (((cpu.serverPercent ?? Number.NaN) / 100) * 1e6) / result.rps };
}

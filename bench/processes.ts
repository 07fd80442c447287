// Child processes of the benchmark: started pinned to a CPU core, remembered, and all stopped on
// every way out (normal end, error, Ctrl-C, SIGTERM).
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './system.ts';

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  readonly exited: Promise<string>;
}

const children = new Set<Child>();

/** Starts `command args` pinned to `core` with taskset; output goes to `logFile`. */
export function startPinned(
  name: string,
  core: number,
  command: string,
  args: readonly string[],
  logFile: string,
  env: NodeJS.ProcessEnv = process.env,
): Child {
  const log = createWriteStream(logFile, { flags: 'a' });
  const proc = spawn('taskset', ['-c', String(core), command, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  proc.stdout!.pipe(log, { end: false });
  proc.stderr!.pipe(log, { end: false });
  return adopt(name, proc, command);
}

/** Remembers a child started elsewhere (wrk), so that clean-up stops it too. */
export function adopt(name: string, proc: ChildProcess, command = name): Child {
  if (proc.pid === undefined) throw new Error(`${name} could not be started (${command})`);
  const exited = new Promise<string>((resolve) => {
    proc.once('exit', (code, signal) => {
      children.delete(child);
      resolve(signal ?? String(code));
    });
    proc.once('error', (error) => {
      children.delete(child);
      resolve(`error: ${error.message}`);
    });
  });
  const child: Child = { name, process: proc, pid: proc.pid, exited };
  children.add(child);
  return child;
}

/** Stops one child: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stop(child: Child, graceMs = 3000): Promise<void> {
  if (!children.has(child)) return;
  child.process.kill('SIGTERM');
  const outcome = await Promise.race([child.exited, sleep(graceMs).then(() => 'timeout')]);
  if (outcome === 'timeout') {
    child.process.kill('SIGKILL');
    await child.exited;
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => stop(child)));
}

/** Synchronous last resort for process exit: signals every child that is still running. */
function killAllNow(): void {
  for (const child of children) {
    try {
      child.process.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

let interrupted = false;
/** True once a signal asked the benchmark to stop: failures after that are expected. */
export function wasInterrupted(): boolean {
  return interrupted;
}

let installed = false;
/** Stops every child on Ctrl-C, SIGTERM and at process exit. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping the benchmark's processes\n`);
      void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}

/** Waits until something accepts TCP connections on 127.0.0.1:port, or the child dies. */
/**
 * The node:http zero-latency upstream (upstream-node.ts) on `core`, ready: its JSON port and its
 * SSE port, each also answering GET /metrics as an idle vLLM.
 */
export async function startNodeUpstream(
  root: string,
  node: string,
  core: number,
  logFile: string,
): Promise<{ readonly child: Child; readonly ports: readonly [number, number] }> {
  const ports = [await freePort(), await freePort()] as const;
  const child = startPinned('node upstream', core, node, [join(root, 'bench/upstream-node.ts'), ...ports.map(String)], logFile);
  await waitForPort(ports[0], child);
  return { child, ports };
}

export async function waitForPort(port: number, child: Child, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead: string | undefined;
  void child.exited.then((code) => (dead = code));
  while (Date.now() < deadline) {
    if (dead !== undefined) throw new Error(`${child.name} exited (${dead}) before listening on port ${port}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(50);
  }
  throw new Error(`${child.name} did not listen on port ${port} within ${timeoutMs / 1000}s`);
}

/** Peak resident set size (VmHWM) of a process and its direct children, in KiB. */
export async function peakRssKiB(pid: number): Promise<number | undefined> {
  const pids = [pid];
  try {
    const kids = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
    pids.push(...kids.split(/\s+/).filter(Boolean).map(Number));
  } catch {
    // No children file: the process alone.
  }
  let total = 0;
  for (const p of pids) {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
      if (match) total += Number(match[1]);
    } catch {
      if (p === pid) return undefined;
    }
  }
  return total;
}

/** The arguments that start a gateway from `config` on 127.0.0.1:`port`, logging warnings only (every bench runs it so). */
export function gatewayArgs(root: string, config: string, port: number, redisUrl?: string): string[] {
  return [
    join(root, 'bin/tollgate.ts'),
    'gateway',
    '--config',
    config,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
    ...(redisUrl ? ['--redis-url', redisUrl] : []),
  ];
}

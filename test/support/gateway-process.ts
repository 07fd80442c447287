// A gateway (or router workers) in a process of its own, started exactly as `tollgate gateway`
// (`tollgate router-worker`) is, for tests that need several processes sharing one Redis, or one
// to kill.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { PROCESS_START_MS } from './patience.ts';

export interface GatewayProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Every line the gateway has logged so far (standard output and standard error). */
  readonly output: readonly string[];
  stop(): Promise<void>;
}

/** The command line run from the sources, or as `npm start` and the image run it, compiled (npm run build). */
export const SOURCES_CLI = new URL('../../bin/tollgate.ts', import.meta.url).pathname;
export const COMPILED_CLI = new URL('../../dist/app/bin/tollgate.js', import.meta.url).pathname;

/**
 * Starts `node <cli> gateway <args>` on a free port and resolves once it listens; `onLine` is told
 * each line it logs meanwhile too (what a start that waits says).
 */
export function startGatewayProcess(
  args: string[],
  env: Record<string, string> = {},
  cli = SOURCES_CLI,
  onLine?: (line: string) => void,
): Promise<GatewayProcess> {
  return startProcess(cli, 'gateway', args, env, /Tollgate gateway listening on (http:\/\/[^"\s]+)/, onLine);
}

/** Starts `tollgate router-worker <args>` (its metrics on a free port) and resolves once its workers run; `url` is unused. */
export function startWorkerProcess(args: string[], env: Record<string, string> = {}): Promise<GatewayProcess> {
  // Its url: where /metrics, /healthz and /readyz are (the log line says the port; the host is the test's).
  return startProcess(SOURCES_CLI, 'router-worker', args, env, /Tollgate router workers running; metrics on port (\d+)/).then(
    (started) => ({
      ...started,
      url: `http://127.0.0.1:${started.url}`,
    }),
  );
}

async function startProcess(
  cli: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  onLine: (line: string) => void = () => {},
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [cli, command, '--host', '127.0.0.1', '--port', '0', '--log-level', 'info', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  const output: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const take = (line: string) => {
    output.push(line);
    onLine(line);
  };
  createInterface({ input: child.stderr! }).on('line', take);
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', take);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`tollgate ${command} did not start within ${PROCESS_START_MS} ms:\n${stderr.join('')}`)),
      PROCESS_START_MS,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tollgate ${command} exited with code ${code}:\n${stderr.join('')}`));
    });
    lines.on('line', (line) => {
      const match = ready.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  return {
    url,
    child,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/**
 * Runs `tollgate <args> --log-level silent` from the sources until it exits (it must: a start
 * that is refused), and returns its exit code and standard error.
 */
export async function failedStart(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [SOURCES_CLI, ...args, '--log-level', 'silent'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, stderr };
}

// `tollgate operator` in a process of its own (as it runs in a pod), so a test can SIGKILL it:
// a leader that dies without releasing its Lease. Its output is kept for failure messages.
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { spawnOwned } from '../../support/owned-process.ts';

const CLI = fileURLToPath(new URL('../../../bin/tollgate.ts', import.meta.url));
const OUTPUT_LIMIT = 256 * 1024;

export interface OperatorProcess {
  /** stdout and stderr so far (the last OUTPUT_LIMIT characters). */
  output(): string;
  /** http://127.0.0.1:<port> of /healthz, /readyz and /metrics once the operator has logged its port; undefined before. */
  healthUrl(): string | undefined;
  /** SIGKILL, then waits for the exit. Idempotent. */
  kill(): Promise<void>;
}

export interface OperatorProcessOptions {
  readonly identity: string;
  readonly kubeconfig: string;
  readonly redisUrl: string;
  /** Short, so a killed leader is replaced within a test's patience. Default 4 s. */
  readonly leaseDurationSeconds?: number;
  /** More environment variables (OTEL_*, to trace). */
  readonly env?: Readonly<Record<string, string>>;
}

export function startOperatorProcess(options: OperatorProcessOptions): OperatorProcess {
  const args = [
    CLI,
    'operator',
    '--namespace',
    'tollgate',
    '--kubeconfig',
    options.kubeconfig,
    '--redis-url',
    options.redisUrl,
    '--pod-name',
    options.identity,
    '--lease-duration-seconds',
    String(options.leaseDurationSeconds ?? 4),
    '--status-period-seconds',
    '1',
    '--log-level',
    'info',
    // Replicas share this machine: each takes a free port and logs it (see healthUrl).
    '--health-port',
    '0',
    '--health-host',
    '127.0.0.1',
  ];
  // No TOLLGATE_* or KUBECONFIG of the test's environment may steer the operator.
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('TOLLGATE_') && !name.startsWith('OTEL_') && name !== 'KUBECONFIG'),
    ),
    ...options.env,
  };
  const child = spawnOwned(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  let healthPort: string | undefined;
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    // Kept once seen: the line may later scroll out of the kept output.
    healthPort ??= /"msg":"health server listening"[^\n]*"port":(\d+)/.exec(output)?.[1];
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = once(child, 'exit');
  return {
    output: () => output,
    healthUrl: () => (healthPort === undefined ? undefined : `http://127.0.0.1:${healthPort}`),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

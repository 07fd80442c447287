// A reason the gateway cannot start that the operator can fix (a port in use, a host name that
// does not resolve, Redis out of reach or holding a layout this build does not read, a malformed
// admin key): the CLI prints its message as one line and exits 1, without a stack trace, which
// would only hide the line that matters.
import { RedisClusterRefusedError } from './store/redis/cluster-check.ts';
import { describeTarget, redisTarget } from './store/redis/redis-target.ts';
import { RedisLayoutError } from './store/redis/layout-check.ts';

export class StartupError extends Error {
  override name = 'StartupError';
}

/** Why listening on host:port failed, in words, or undefined for an error nobody expects. */
export function listenProblem(error: NodeJS.ErrnoException, host: string, port: number): StartupError | undefined {
  const where = `${host}:${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`cannot listen on ${where}: the port is already in use (choose another with --port)`);
    case 'EACCES':
      return new StartupError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`cannot listen on ${where}: this machine has no such address (check --host)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return new StartupError(`cannot listen on ${where}: the host name "${host}" does not resolve (check --host)`);
    default:
      return undefined;
  }
}

/**
 * Why the store at `url` did not open: Redis holds a layout this build does not read, or it
 * cannot be reached (`why`: the connection's last error, when it says more than `error`).
 */
export function storeProblem(url: string, error: unknown, why?: string): StartupError {
  if (error instanceof RedisLayoutError || error instanceof RedisClusterRefusedError)
    return new StartupError(`Redis at ${redactedUrl(url)} ${error.problem}`);
  return new StartupError(`cannot reach Redis at ${redactedUrl(url)}: ${why ?? (error as Error).message}`);
}

/** A Redis URL fit to print: without its user name and password (redis-target.ts says how). */
export function redactedUrl(url: string): string {
  try {
    return describeTarget(redisTarget(url));
  } catch {
    return 'the Redis URL given';
  }
}

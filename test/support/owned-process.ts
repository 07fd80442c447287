// Processes a test starts, owned by the test file's process: none outlives it, however it ends.
// On a normal exit (node --test --test-force-exit exits once a file's tests are done, hung or not)
// the 'exit' hook kills what still runs; when the file's process is killed outright (SIGKILL, a
// crash) and runs no hook at all, `setpriv --pdeathsig` has the kernel kill its children.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { findOnPath } from './executables.ts';

const setpriv = findOnPath('setpriv');
const running = new Set<ChildProcess>();

function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * Spawns `command` with `args` as `spawn` would (and typed as it is, so the streams a stdio option
 * pipes are not null), killed with the test's process if it is still running then.
 */
export const spawnOwned = ownedSpawn as typeof spawn;

function ownedSpawn(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  if (!Array.isArray(args)) throw new TypeError('spawnOwned takes the arguments as an array (even an empty one)');
  const child = setpriv ? spawn(setpriv, ['--pdeathsig', 'SIGKILL', '--', command, ...args], options) : spawn(command, [...args], options);
  if (running.size === 0) process.on('exit', killAll);
  running.add(child);
  const forget = () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killAll);
  };
  child.once('exit', forget);
  child.once('error', forget);
  return child;
}

/** Whether `child` has neither exited nor failed to start. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null && child.pid !== undefined;
}

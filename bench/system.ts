// The machine: which tools are there (installing nginx, wrk and redis-server from Debian when
// missing and allowed), what it is (for the results), and free loopback ports.
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Finds an executable on PATH, plus the sbin directories where Debian puts nginx. */
export function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export interface Tools {
  readonly nginx: string | undefined;
  readonly wrk: string;
  readonly redis: string | undefined;
  readonly notes: string[];
}

/**
 * nginx, wrk and redis-server, installed with apt-get when missing and we are root. wrk is
 * required; without nginx the benchmark falls back to a node:http upstream and skips the nginx
 * proxy; without redis-server it skips the gateway contender that keeps its state in Redis.
 */
export function ensureTools(): Tools {
  const notes: string[] = [];
  if (!which('taskset')) throw new Error('taskset (util-linux) is required to pin processes to cores');
  // Debian's package names are the executables' names.
  const missing = ['nginx', 'wrk', 'redis-server'].filter((tool) => !which(tool));
  if (missing.length > 0) {
    const root = process.getuid?.() === 0;
    if (root && which('apt-get')) {
      process.stdout.write(
        `Installing ${missing.join(' and ')} from Debian's packages: apt-get update, then apt-get install -y ${missing.join(' ')}\n`,
      );
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      const update = spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
      if (update.status !== 0) notes.push('apt-get update failed');
      const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
      if (install.status !== 0) notes.push(`apt-get install ${missing.join(' ')} failed`);
    } else {
      notes.push(`${missing.join(' and ')} missing and not installable here (needs root and apt-get)`);
    }
  }
  const wrk = which('wrk');
  if (!wrk) throw new Error(`wrk is required and could not be installed${notes.length ? ` (${notes.join('; ')})` : ''}`);
  const nginx = which('nginx');
  if (!nginx) notes.push('nginx is not available: the upstream is a node:http server and the nginx proxy_pass contender is skipped');
  const redis = which('redis-server');
  if (!redis) notes.push('redis-server is not available: the contender "Tollgate, all features (Redis)" is skipped');
  return { nginx, wrk, redis, notes };
}

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly memory: string;
  readonly kernel: string;
  readonly node: string;
  readonly nginx: string;
  readonly wrk: string;
  readonly redis: string;
}

export async function describeMachine(tools: Tools): Promise<Machine> {
  const nproc = await run('nproc').then(
    (r) => Number(r.stdout.trim()),
    () => cpus().length,
  );
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // Keep os.cpus()'s name.
  }
  const kernel = await run('uname', ['-sr']).then(
    (r) => r.stdout.trim(),
    () => 'unknown',
  );
  // nginx -v and wrk -v print to stderr; wrk -v exits 1.
  const version = async (cmd: string | undefined, args: string[], pattern: RegExp) => {
    if (!cmd) return 'not installed';
    const out = await run(cmd, args).then(
      (r) => r.stdout + r.stderr,
      (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
    return pattern.exec(out)?.[1] ?? (out.trim().split('\n')[0] || 'unknown');
  };
  return {
    cores: nproc,
    cpu,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel,
    node: process.version,
    nginx: await version(tools.nginx, ['-v'], /nginx version: nginx\/(\S+)/),
    wrk: await version(tools.wrk, ['-v'], /^(wrk \S+)/m),
    redis: await version(tools.redis, ['--version'], /\bv=(\S+)/),
  };
}

/** A port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

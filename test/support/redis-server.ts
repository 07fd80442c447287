// A real redis-server for tests: on a free loopback port, no persistence, in a temporary
// directory. restart() brings it back on the same port empty (data and scripts gone, unless
// stopKeepingData() saved them first), to test
// that clients recover by themselves.
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { findOnPath } from './executables.ts';
import { freePort } from './free-port.ts';
import { spawnOwned } from './owned-process.ts';
import { PROCESS_START_MS } from './patience.ts';

export interface RunningRedis {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** Shuts the server down (SIGTERM) and removes its directory; restart() can still follow. */
  stop(): Promise<void>;
  /** Stops the server if it runs, then starts it again on the same port (empty, unless stopKeepingData came first). */
  restart(): Promise<void>;
  /** Saves the data to the server's directory and stops, as a persistent Redis going down would; restart() loads it back. */
  stopKeepingData(): Promise<void>;
  /** Kills the server outright (SIGKILL), as a crash would; restart() brings it back. */
  kill(): Promise<void>;
  /**
   * Stops the server process (SIGSTOP) without closing its connections: it answers nothing,
   * as a stuck Redis or a network that drops packets would. Call resume() (in a finally).
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
}

export interface RedisServerOptions {
  /** More arguments of redis-server (`--replicaof 127.0.0.1 <port>`, say). */
  readonly args?: readonly string[];
  /** Runs a Sentinel with this configuration (its `sentinel monitor` lines) instead of a data node. */
  readonly sentinel?: string;
  /**
   * A Redis Cluster node: its cluster bus gets a port of its own, found free like the data port
   * (by default the bus listens on the data port + 10000, which nothing checks is free).
   */
  readonly clusterBus?: boolean;
}

/** Ports found free can be taken before the server binds them: a start that finds its port taken tries new ones, this many times in all. */
const BIND_ATTEMPTS = 5;

/** Runs `command` on a connection of its own to the node on `port`, then closes it (setting up, and reading state, in tests). */
export async function askRedis<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {}); // a refused connection rejects connect() below
  try {
    await client.connect();
    return await command(client);
  } finally {
    client.disconnect();
  }
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RunningRedis> {
  const binary = findOnPath('redis-server');
  if (!binary) {
    throw new Error('redis-server is not installed: run `apt-get install redis-server` (or `bash test/support/install-system-deps.sh`)');
  }
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-redis-'));
  let port = 0;
  let args: string[] = [];
  let child: ChildProcess | undefined;

  const choosePorts = async () => {
    port = await freePort();
    args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args ?? [])];
    if (options.clusterBus) args.push('--cluster-port', String(await freePort()));
    if (options.sentinel !== undefined) {
      // A Sentinel rewrites its configuration file as it learns the topology: one of its own.
      const file = join(dir, 'sentinel.conf');
      await writeFile(file, options.sentinel);
      args = [file, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
    }
  };
  const start = async () => {
    await mkdir(dir, { recursive: true });
    const output: string[] = [];
    child = spawnOwned(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    await waitForPong(port, child, () => output.join(''));
  };
  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    await exited;
  };

  for (let attempt = 1; ; attempt++) {
    await choosePorts();
    try {
      await start();
      break;
    } catch (error) {
      await end('SIGKILL');
      if (attempt === BIND_ATTEMPTS || !(error instanceof PortTakenError)) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await end('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await end('SIGTERM');
      await start();
    },
    kill: () => end('SIGKILL'),
    pause: () => {
      child?.kill('SIGSTOP');
    },
    resume: () => {
      child?.kill('SIGCONT');
    },
    async stopKeepingData() {
      const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
      await client.connect();
      await client.save();
      client.disconnect();
      await end('SIGTERM');
    },
  };
}

/**
 * Starts `count` servers; when any fails to start, stops those that did before throwing, so a
 * failed set-up leaves nothing running.
 */
export async function startRedisServers(count: number, start: (index: number) => Promise<RunningRedis>): Promise<RunningRedis[]> {
  const results = await Promise.allSettled(Array.from({ length: count }, (_, index) => start(index)));
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((node) => node.stop()));
    throw failed.reason;
  }
  return started;
}

/** A server that exited because another process holds its port (or its cluster bus port). */
class PortTakenError extends Error {}

/** Polls PING until the server answers PONG; fails if it exits or takes too long. */
async function waitForPong(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + PROCESS_START_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const message = `redis-server exited with code ${child.exitCode}:\n${output()}`;
      throw /Address already in use/.test(output()) ? new PortTakenError(message) : new Error(message);
    }
    if (await pong(port)) return;
    await sleep(20);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING within ${PROCESS_START_MS} ms:\n${output()}`);
}

function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

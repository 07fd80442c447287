// redis-server as the benchmark runs it: a foreground child pinned to a core, on a free loopback
// port, without persistence (`--save ''`, `--appendonly no`), its working directory a fresh
// temporary one; never the system's service. It lives for the whole benchmark run.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPinned, stop, type Child } from './processes.ts';
import { freePort } from './system.ts';

export interface RedisInstance {
  readonly child: Child;
  readonly port: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** `more`: further arguments of redis-server (`--replicaof 127.0.0.1 <port>` for a replica). */
export async function startRedis(redis: string, core: number, logFile: string, more: readonly string[] = []): Promise<RedisInstance> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-redis-'));
  // On every way out (error, Ctrl-C) the directory goes too; stop() removes it earlier.
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  // --logfile '' logs to stdout, which startPinned writes to logFile.
  const child = startPinned(
    'redis-server',
    core,
    redis,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      '',
      '--daemonize',
      'no',
      ...more,
    ],
    logFile,
  );
  const deadline = Date.now() + 10_000;
  let dead: string | undefined;
  void child.exited.then((code) => (dead = code));
  for (;;) {
    if (dead !== undefined) throw new Error(`redis-server exited (${dead}) before answering PING; see ${logFile}`);
    if ((await command(port, 'PING').catch(() => '')) === '+PONG') break;
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`redis-server did not answer PING within 10 s; see ${logFile}`);
    }
    await sleep(50);
  }
  return {
    child,
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stop(child);
      await rm(dir, { recursive: true, force: true });
      process.off('exit', removeDir);
    },
  };
}

/** Sends one inline command and returns the first line of the reply (status replies only). */
function command(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(5000, () => {
      socket.destroy();
      reject(new Error(`redis-server did not answer ${text} within 5 s`));
    });
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`${text}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      const end = reply.indexOf('\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(reply.slice(0, end));
      }
    });
  });
}

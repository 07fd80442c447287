// The processes `npm run bench` measures, started the same way by every mode that compares the
// gateway with the upstream called directly and with the bare Node proxy (bench/run.ts, the
// throughput rounds; bench/serial.ts, latency at concurrency one): the zero-latency upstream, the
// bare Node proxy, and the gateway variants (with a Redis of their own where they need one), each
// pinned like the others. One copy, so that the modes measure the same contenders.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mode } from './bodies.ts';
import { startNginxUpstream } from './nginx.ts';
import { gatewayArgs, startPinned, waitForPort, type Child } from './processes.ts';
import { startRedis, type RedisInstance } from './redis.ts';
import type { ContenderId, GatewayId } from './report.ts';
import { freePort, type Tools } from './system.ts';

/** The configuration's two users: `plain` without budget or limits, `full` with both. */
export type BenchUser = 'plain' | 'full';

export interface GatewayVariant {
  readonly contender: GatewayId;
  readonly label: string;
  readonly user: BenchUser;
  readonly store: 'memory' | 'redis';
}

export const GATEWAY_VARIANTS: readonly GatewayVariant[] = [
  { contender: 'gateway-plain', label: 'Tollgate, pass-through', user: 'plain', store: 'memory' },
  { contender: 'gateway-full', label: 'Tollgate, all features (memory)', user: 'full', store: 'memory' },
  { contender: 'gateway-redis', label: 'Tollgate, all features (Redis)', user: 'full', store: 'redis' },
];

/** A server under test, running for the whole benchmark. */
export interface Server {
  readonly contender: ContenderId;
  readonly label: string;
  readonly url: (mode: Mode) => string;
  readonly pid: number;
  readonly user: BenchUser;
  readonly modes: readonly Mode[];
  /** Runs on V8's JIT: warmed up before the rounds. */
  readonly jit: boolean;
  /** A helper of the server on the load core whose CPU use is reported (Redis). */
  readonly sidecar?: RedisInstance;
}

export interface Upstream {
  readonly child: Child;
  /** How the results describe it. */
  readonly text: string;
  readonly url: (mode: Mode) => string;
  readonly ports: Readonly<Record<Mode, number>>;
}

/** The zero-latency upstream on the load core (nginx, or node:http without it), one port per mode. */
export async function startUpstream(tools: Tools, scratch: string, bench: string, loadCore: number): Promise<Upstream> {
  const ports = { json: await freePort(), sse: await freePort() };
  const url = (mode: Mode) => `http://127.0.0.1:${ports[mode]}`;
  if (tools.nginx) {
    const { child } = await startNginxUpstream(tools.nginx, join(scratch, 'nginx-upstream'), loadCore, ports);
    return {
      child,
      url,
      ports,
      text: 'nginx `return 200` with fixed bodies (zero latency), 1 worker; one port answers JSON, the other SSE',
    };
  }
  const child = startPinned(
    'node upstream',
    loadCore,
    process.execPath,
    [join(bench, 'upstream-node.ts'), String(ports.json), String(ports.sse)],
    join(scratch, 'upstream-node.log'),
  );
  await waitForPort(ports.json, child);
  await waitForPort(ports.sse, child);
  return {
    child,
    url,
    ports,
    text: 'node:http fallback with fixed bodies (zero latency; nginx was not available), one port answers JSON, the other SSE',
  };
}

/** The reference proxies, non-streamed only, each doing the least a gateway does with nothing else. */
const REFERENCES = {
  // The floor under the gateway: what node:http and undici reach on this machine with no framework and no feature.
  node: { script: 'node-proxy.ts', label: 'bare Node proxy (reference)', name: 'bare Node proxy' },
  // The same work in a Fastify route: what the framework the gateway is built on costs by itself.
  fastify: { script: 'fastify-proxy.ts', label: 'bare Fastify proxy (reference)', name: 'bare Fastify proxy' },
} as const;

/** Starts a reference proxy (node-proxy.ts, the floor, or fastify-proxy.ts) in front of the JSON upstream. */
export async function startReference(
  which: keyof typeof REFERENCES,
  node: string,
  bench: string,
  scratch: string,
  core: number,
  upstreamJson: string,
  env: NodeJS.ProcessEnv,
): Promise<Server> {
  const { script, label, name } = REFERENCES[which];
  const port = await freePort();
  const child = startPinned(name, core, node, [join(bench, script), String(port), upstreamJson], join(scratch, `${which}-proxy.log`), env);
  await waitForPort(port, child);
  return { contender: which, label, url: () => `http://127.0.0.1:${port}`, pid: child.pid, user: 'plain', modes: ['json'], jit: true };
}

export interface GatewayOptions {
  readonly variants: readonly GatewayVariant[];
  /** This tree, whose bin/tollgate.ts runs. */
  readonly root: string;
  /** `--before <dir>`: each variant also runs from there, labelled *(before)*, listed right before this tree's. */
  readonly before: string | undefined;
  readonly node: string;
  readonly config: string;
  readonly scratch: string;
  readonly serverCore: number;
  readonly loadCore: number;
  /** redis-server's path; without it the variants kept in Redis are left out (ensureTools notes it). */
  readonly redis: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly modes: readonly Mode[];
  readonly waitReady: (url: string, child: Child) => Promise<void>;
}

export interface Gateways {
  readonly servers: Server[];
  /** The gateway processes, to stop before their Redis (a gateway shutting down still writes to it). */
  readonly children: Child[];
  /** Each gateway's log file (warnings and errors only). */
  readonly logs: string[];
  readonly redis: RedisInstance[];
}

/** Starts every gateway variant (and its before twin), each on the server core, ready when it returns. */
export async function startGateways(options: GatewayOptions): Promise<Gateways> {
  const { before, root } = options;
  const variants = options.variants.flatMap((variant): (Omit<GatewayVariant, 'contender'> & { contender: ContenderId; root: string })[] =>
    before === undefined
      ? [{ ...variant, root }]
      : [
          { ...variant, contender: `${variant.contender}-before` as const, label: `${variant.label} (before)`, root: before },
          { ...variant, root },
        ],
  );
  const gateways: Gateways = { servers: [], children: [], logs: [], redis: [] };
  for (const variant of variants) {
    let redis: RedisInstance | undefined;
    if (variant.store === 'redis') {
      if (!options.redis) continue; // noted by ensureTools
      // Redis shares the load core with the upstream and the load generator: the gateway keeps core 0 alone.
      redis = await startRedis(options.redis, options.loadCore, join(options.scratch, `${variant.contender}-redis-server.log`));
      gateways.redis.push(redis);
    }
    const port = await freePort();
    const logFile = join(options.scratch, `${variant.contender}.log`);
    gateways.logs.push(logFile);
    const gateway = startPinned(
      'gateway',
      options.serverCore,
      options.node,
      gatewayArgs(variant.root, options.config, port, redis?.url),
      logFile,
      options.env,
    );
    await options.waitReady(`http://127.0.0.1:${port}/readyz`, gateway).catch(async (error: Error) => {
      const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(0, 8).join('\n  ');
      throw new Error(`${error.message}; its log (${logFile}) begins:\n  ${tail}`);
    });
    gateways.children.push(gateway);
    gateways.servers.push({
      contender: variant.contender,
      label: variant.label,
      url: () => `http://127.0.0.1:${port}`,
      pid: gateway.pid,
      user: variant.user,
      modes: options.modes,
      jit: true,
      sidecar: redis,
    });
  }
  return gateways;
}

/** The warning and error lines the gateways wrote (their log level is warn): a run says how many. */
export async function gatewayLogLines(logs: readonly string[]): Promise<number> {
  let lines = 0;
  for (const logFile of logs) {
    const text = await readFile(logFile, 'utf8').catch(() => '');
    lines += text.split('\n').filter((line) => line.trim() !== '').length;
  }
  return lines;
}

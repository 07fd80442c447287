// The one way a test file gets its gateways: in this process (or as processes of their own), on
// the file's Redis or in memory, from a typed configuration (gateway-config.ts) or, for tests of
// the file format, YAML text. The file declares its bed once, at the top level; the bed starts
// its Redis before the first test (or when first asked: a file's before() hooks run alongside
// the bed's, not after it) and stops it after the last, and closes every gateway it started: at
// the end of the test given as `t`, or else after the file's tests, before Redis stops. As the
// store contract suites run one specification on both stores, a test can ask for the same
// gateway on Redis or in memory by one option.
import { after, before, type TestContext } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configText, type GatewayConfig } from './gateway-config.ts';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.ts';
import { COMPILED_CLI, SOURCES_CLI, startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { startRedis, type RunningRedis } from './redis-server.ts';
import { startRedisCluster, type RedisCluster } from './redis-cluster.ts';

export interface BedOptions {
  /**
   * Starts one redis-server for the file (true), or a Redis Cluster of three primaries with a
   * replica each ('cluster'), which gateways use unless told `store: 'memory'`.
   */
  readonly redis?: boolean | 'cluster';
}

export interface BedGatewayOptions extends TestGatewayOptions {
  /** Closes the gateway when this test ends; without it, after the file's last test. */
  readonly t?: TestContext;
  /** Where the gateway keeps its state; default the file's Redis when the bed has one, else memory. */
  readonly store?: 'redis' | 'memory';
}

export interface BedProcessOptions {
  /** More command-line arguments (`--config` and, on Redis, `--redis-url` come first). */
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
  readonly t?: TestContext;
  readonly store?: 'redis' | 'memory';
  /** Runs the compiled app (npm run build) instead of the sources. */
  readonly compiled?: boolean;
}

/** A gateway of the bed: reconfigure() takes a typed configuration too. */
export interface BedGateway extends TestGateway {
  reconfigure(config: GatewayConfig | string): Promise<void>;
}

export interface TestBed {
  /** Starts the file's Redis, if it has one and it is not started yet; a before() hook awaits it before reading `redis`. */
  ready(): Promise<void>;
  /** The file's Redis: only in a bed made with `redis: true`, once ready() has resolved (always so in a test). */
  readonly redis: RunningRedis;
  /** The file's Redis Cluster: only in a bed made with `redis: 'cluster'`, once ready() has resolved. */
  readonly cluster: RedisCluster;
  /** A gateway in this process, listening on a free port, with `config`. */
  gateway(config: GatewayConfig | string, options?: BedGatewayOptions): Promise<BedGateway>;
  /** `count` gateways with the same `config` and options, started one after the other (each seeds what the next finds). */
  gateways(count: number, config: GatewayConfig | string, options?: BedGatewayOptions): Promise<BedGateway[]>;
  /** A gateway in a process of its own (`tollgate gateway --config <file>`), for tests that kill one or read its output. */
  process(config: GatewayConfig | string, options?: BedProcessOptions): Promise<GatewayProcess>;
}

/** Declares the file's bed; call at the top level of a test file (it registers before and after). */
export function testBed(options: BedOptions = {}): TestBed {
  let redis: RunningRedis | undefined;
  let cluster: RedisCluster | undefined;
  let starting: Promise<void> | undefined;
  const start = async (): Promise<void> => {
    if (options.redis === 'cluster') cluster = await startRedisCluster();
    else if (options.redis) redis = await startRedis();
  };
  const ready = (): Promise<void> => (starting ??= start());
  const atEnd: (() => Promise<void>)[] = [];
  before(ready);
  after(async () => {
    // A test that failed with Redis paused must not leave the gateways unable to close.
    redis?.resume();
    await Promise.all(atEnd.splice(0).map((close) => close()));
    await redis?.stop();
    await cluster?.stop();
  });

  const redisUrl = (store: 'redis' | 'memory' | undefined): string | undefined => {
    if (store === 'memory' || (store === undefined && !options.redis)) return undefined;
    const url = redis?.url ?? cluster?.url;
    if (!url) throw new Error('this bed has no Redis: testBed({ redis: true })');
    return url;
  };
  /** Closes `close` once, at the end of `t` or of the file, and whenever the test calls it first. */
  const own = (close: () => Promise<void>, t: TestContext | undefined): (() => Promise<void>) => {
    let closing: Promise<void> | undefined;
    const once = () => (closing ??= close());
    if (t) t.after(once);
    else atEnd.push(once);
    return once;
  };

  const bed: TestBed = {
    ready,
    get redis() {
      if (options.redis !== true) throw new Error('this bed has no single Redis: testBed({ redis: true })');
      if (!redis) throw new Error('await bed.ready() before reading bed.redis in a before() hook');
      return redis;
    },
    get cluster() {
      if (options.redis !== 'cluster') throw new Error("this bed has no Redis Cluster: testBed({ redis: 'cluster' })");
      if (!cluster) throw new Error('await bed.ready() before reading bed.cluster in a before() hook');
      return cluster;
    },
    async gateway(config, gatewayOptions = {}) {
      await ready();
      const { t, store, ...rest } = gatewayOptions;
      const url = redisUrl(store);
      const gateway = await startTestGateway(asText(config), {
        ...rest,
        settings: { ...(url === undefined ? {} : { redisUrl: url }), ...rest.settings },
      });
      return { ...gateway, reconfigure: (next) => gateway.reconfigure(asText(next)), close: own(() => gateway.close(), t) };
    },
    async gateways(count, config, gatewayOptions) {
      const started: BedGateway[] = [];
      for (let i = 0; i < count; i++) started.push(await bed.gateway(config, gatewayOptions));
      return started;
    },
    async process(config, processOptions = {}) {
      await ready();
      const dir = await mkdtemp(join(tmpdir(), 'tollgate-bed-'));
      const file = join(dir, 'config.yaml');
      await writeFile(file, asText(config));
      const url = redisUrl(processOptions.store);
      const args = ['--config', file, ...(url === undefined ? [] : ['--redis-url', url]), ...(processOptions.args ?? [])];
      const cli = processOptions.compiled ? COMPILED_CLI : SOURCES_CLI;
      const started = await startGatewayProcess(args, processOptions.env, cli).catch(async (error: unknown) => {
        await rm(dir, { recursive: true, force: true });
        throw error;
      });
      const stop = own(async () => {
        await started.stop();
        await rm(dir, { recursive: true, force: true });
      }, processOptions.t);
      return { ...started, stop };
    },
  };
  return bed;
}

function asText(config: GatewayConfig | string): string {
  return typeof config === 'string' ? config : configText(config);
}

// One redis-server for a test file that works on the store itself, without a gateway (a file
// with gateways takes test-bed.ts's), and a client of the file's own for what its tests read and
// write directly. Called once at the top level of the file, it declares the hooks the files used
// to repeat: the server starts before the first test and stops after the last; with
// `emptyBeforeEach`, each test starts on an empty Redis; after each test, a server a failed test
// left paused runs again, so the next test's hooks (closing stores) do not hang on it.
import { after, afterEach, before, beforeEach } from 'node:test';
import { Redis, type RedisOptions } from 'ioredis';
import { startRedis, type RunningRedis } from './redis-server.ts';

export interface UseRedisOptions {
  /** Empties Redis (FLUSHALL) before each test of the file, before the beforeEach hooks of its suites. */
  readonly emptyBeforeEach?: boolean;
  /**
   * The file stops or restarts the server: the client then retries its commands until the server
   * is back instead of failing them, and the connection it loses meanwhile is no error.
   */
  readonly restarts?: boolean;
}

/** The file's Redis: the server (once started, as in every test) and the file's client. */
export interface RedisHandle extends RunningRedis {
  /** The file's own client, connected when first asked for, closed after the file's tests. */
  readonly admin: Redis;
  /**
   * Starts the server if it is not started yet. node:test runs a file's top-level before() hooks
   * together, so one of the file's own that uses the handle awaits this first.
   */
  ready(): Promise<void>;
  /** Empties Redis (FLUSHALL), as a store factory does before each store it makes. */
  empty(): Promise<unknown>;
}

/** While the file's Redis restarts: retry every 50 ms, and let commands wait for it. */
const ACROSS_RESTARTS: RedisOptions = { maxRetriesPerRequest: null, retryStrategy: () => 50 };

/** Declares the file's Redis; call at the top level of a test file (it registers its hooks). */
export function useRedis(options: UseRedisOptions = {}): RedisHandle {
  let server: RunningRedis | undefined;
  let starting: Promise<void> | undefined;
  let client: Redis | undefined;
  const ready = (): Promise<void> =>
    (starting ??= startRedis().then((started) => {
      server = started;
    }));
  const running = (): RunningRedis => {
    if (!server) throw new Error("the file's Redis is not started: await redis.ready() in a before() hook first");
    return server;
  };
  const admin = (): Redis => {
    if (client) return client;
    client = new Redis(running().url, options.restarts ? ACROSS_RESTARTS : {});
    if (options.restarts) client.on('error', () => {}); // the connection lost to a restart; it reconnects
    return client;
  };

  before(ready);
  if (options.emptyBeforeEach) beforeEach(() => admin().flushall());
  afterEach(() => server?.resume());
  after(async () => {
    server?.resume();
    client?.disconnect();
    await server?.stop();
  });

  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get admin() {
      return admin();
    },
    ready,
    empty: () => admin().flushall(),
    stop: () => running().stop(),
    restart: () => running().restart(),
    stopKeepingData: () => running().stopKeepingData(),
    kill: () => running().kill(),
    pause: () => running().pause(),
    resume: () => running().resume(),
  };
}

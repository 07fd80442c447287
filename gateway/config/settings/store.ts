// Settings of what the gateway keeps in its store and of the store itself: the bootstrap admin
// key and keys per user, budget holds and leases, usage and stored responses, and how Redis is
// waited for and what happens when it does not answer. One group of the gateway's settings
// registry (gateway/config/settings.ts).
import { z } from 'zod';
import { RedisUrl, type Setting, type Settings } from '../../../core/settings.ts';
import { Bool, Int } from './value-schemas.ts';

/** Accounts, budgets, usage, stored responses and Redis, in the order --help and the docs list them. */
export const STORE_SETTINGS = {
  adminKey: {
    schema: z.string().min(1).optional(),
    value: '<key>',
    env: 'TOLLGATE_ADMIN_KEY',
    help: 'bootstrap admin API key (tg-...); prefer the variable or --admin-key-file over the flag',
    doc: 'Bootstrap admin API key (`tg-` and at least 32 characters), made to exist as a key of the user `admin`. Prefer the variable or the file to the flag, which shows in `ps`.',
  },
  adminKeyFile: {
    schema: z.string().min(1).optional(),
    value: '<file>',
    env: 'TOLLGATE_ADMIN_KEY_FILE',
    help: 'file holding the bootstrap admin API key',
    doc: 'A file holding the bootstrap admin key (a mounted Secret).',
  },
  failOpen: {
    schema: Bool(false),
    value: '<bool>',
    env: 'TOLLGATE_FAIL_OPEN',
    help: 'when Redis is down, serve priced routers without charging budgets (false: answer 503)',
  },
  usageRetentionDays: {
    schema: z.coerce.number().min(1).max(3650).default(30),
    value: '<days>',
    env: 'TOLLGATE_USAGE_RETENTION_DAYS',
    help: 'how long usage records are kept',
  },
  storedResponseMaxBytes: {
    schema: Int(1024, 1024 * 1024 * 1024).default(4 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_STORED_RESPONSE_MAX_BYTES',
    help: 'largest conversation a stored response of the Responses API may hold (store: true), in bytes; larger gets 400',
    doc:
      "Largest conversation a stored response of the Responses API may hold (`store: true`, the default), in bytes of JSON: what `previous_response_id` continues, with the request's own input. " +
      'A request that would store a larger one is refused with 400 before it is sent (`store: false` is served). Each stored response is read whole to be continued, so this bounds what one request reads back.',
  },
  storedResponseMaxTurns: {
    schema: Int(1, 1_000_000).default(1000),
    value: '<n>',
    env: 'TOLLGATE_STORED_RESPONSE_MAX_TURNS',
    help: 'most responses one chain of previous_response_id may store; one more gets 400',
  },
  storedResponsesMaxBytesPerUser: {
    schema: Int(1024, 2 ** 40).default(64 * 1024 * 1024),
    value: '<bytes>',
    env: 'TOLLGATE_STORED_RESPONSES_MAX_BYTES_PER_USER',
    help: "most bytes of stored responses one user keeps; past it the user's oldest are let go",
    doc: "Most bytes of stored responses (the Responses API's) one user keeps, besides at most 10,000 of them: past either, the user's oldest are let go (a `previous_response_id` naming one is then 404). In memory, every user's together are also kept under 256 MiB.",
  },
  reservationTtlSeconds: {
    schema: Int(10, 86_400).default(900),
    value: '<s>',
    env: 'TOLLGATE_RESERVATION_TTL_SECONDS',
    help: 'after this long a budget hold that was never settled (a crashed gateway) is released',
    doc: 'After this long, a budget hold that was never settled (a gateway that crashed) is released. Keep it above your longest request.',
  },
  leaseRequests: {
    schema: Int(0, 10_000).default(32),
    value: '<n>',
    env: 'TOLLGATE_LEASE_REQUESTS',
    help: 'with Redis: budget and rate-limit room a gateway takes ahead, in requests, while a user is far from every limit (0 = every admission in Redis)',
    doc:
      "With Redis: room a gateway takes ahead for a user's next requests, in requests, while the user is far from every limit, so that those are admitted without a round trip " +
      'to Redis ([budgets.md](budgets.md#the-guarantee)). `0`: every admission is a round trip.',
  },
  promptRatioSyncSeconds: {
    schema: z.coerce.number().min(0.01).max(3600).default(5),
    value: '<s>',
    env: 'TOLLGATE_PROMPT_RATIO_SYNC_SECONDS',
    help: "how often the learned ratio of backends' prompt tokens to the gateway's count is shared through the store",
    doc:
      "How often a gateway shares what it learned of how many prompt tokens each router's backends report against its own count, and reads back what all gateways " +
      'learned, through the store; holds use it ([budgets.md](budgets.md#how-much-is-held)).',
  },
  redisCommandTimeoutMs: {
    schema: Int(10, 60_000).default(1000),
    value: '<ms>',
    env: 'TOLLGATE_REDIS_COMMAND_TIMEOUT_MS',
    help: 'with Redis: a command not answered within this time fails, and the request gets 503 (or is served without accounting, failing open); readiness says not ready until Redis answers again',
    doc:
      'With Redis: a command Redis has not answered within this time fails, as if Redis were down: the request gets 503 `store_unavailable` (or, with `--fail-open true`, is ' +
      "served without accounting), further requests are refused at once, and `/readyz` says not ready, until Redis answers the gateway's check again (once a second) " +
      '([budgets.md](budgets.md#when-redis-is-unavailable)).',
  },
  maxKeysPerUser: {
    schema: Int(1, 100_000).default(100),
    value: '<n>',
    env: 'TOLLGATE_MAX_KEYS_PER_USER',
    help: 'most active (unrevoked, unexpired) API keys one user may hold; one more gets 409 key_limit_reached',
    doc:
      'Most active (neither revoked nor expired) API keys one user may hold; one more gets 409 `key_limit_reached` ([admin-api.md](admin-api.md#api-keys-of-a-user)). Keys from ' +
      '`--admin-key` and the config file are always made (they count toward it, but are never refused).',
  },
} as const satisfies Settings;

/**
 * `--redis-url`, apart from the group because --help and the docs list it right after the
 * failure settings; the router workers declare theirs from it (worker-settings.ts).
 */
export const REDIS_URL_SETTING = {
  schema: RedisUrl.optional(),
  value: '<url>',
  env: 'TOLLGATE_REDIS_URL',
  help: 'Redis shared by all gateways (users, budgets, usage, catalog): redis[s]://host:port, or redis[s]+sentinel://sentinel:26379,.../<master>; without it, state is in memory',
  doc:
    'Redis shared by every gateway: users, keys, budgets, rate limits, usage, and the routers created with the admin API. Without it, all of that lives in the ' +
    "process's memory. Required with `--kubernetes`. `redis://` or `rediss://` (TLS) for one address; `redis+sentinel://[user[:password]@]host[:port],.../<master name>[/<db>]` " +
    '(`rediss+sentinel://` with TLS) for a primary that Redis Sentinel watches: the clients ask the Sentinels for it, and follow a failover ([redis.md](redis.md)).',
  defaultText: '(memory)',
} as const satisfies Setting;

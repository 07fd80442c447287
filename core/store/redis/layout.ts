// The Redis layout as a versioned contract between the processes that share one Redis: gateway
// pods, router workers (`tollgate router-worker`) and the operator, which may run different
// builds during a rolling upgrade. The data carry the format version they are laid out in
// (LAYOUT_VERSION_KEY), and every process checks it when it opens the store (layout-check.ts),
// so that no build reads or writes data in a layout it does not know. The table below lists
// what the layout holds, family by family, so that a reader sees all of it in one place; the
// key names themselves are built in keys.ts and queue-keys.ts.
//
// Layout 1 is the layout of every Redis written before the version was kept, and it includes
// the older shapes this build still reads within it (usage records without their later fields,
// read by redis-usage-log.ts fromEntry). Raise LAYOUT_VERSION when data are written in a way an
// earlier build would misread; raise OLDEST_READ_LAYOUT when this build stops reading a layout.

/** The format version of the layout this build writes. */
export const LAYOUT_VERSION = 1;

/** The oldest layout this build still reads; a Redis holding an older one is refused. */
export const OLDEST_READ_LAYOUT = 1;

/** The layout of data written before the version was kept: a Redis with data but no version holds it. */
export const UNVERSIONED_LAYOUT = 1;

/** String: the layout's format version, a decimal integer, written once by the first process to open the store. */
export const LAYOUT_VERSION_KEY = 'tg:layout';

/**
 * Matches every key of the layout but the queue streams (`router.*`, named by the spec): a Redis
 * with no key matching it holds no Tollgate data. Every process that writes anything writes
 * some key of it (a gateway at least `tg:seeded`, a router worker its queue's `tg:q:` keys).
 */
export const DATA_PATTERN = 'tg:*';

/** Redis's data types, and the pub/sub channels that are part of the contract too. */
export type KeyKind = 'string' | 'hash' | 'sorted set' | 'stream' | 'list' | 'channel';

export interface KeyFamily {
  /** Redis glob patterns of the family's keys and channels: `*` stands for an id, `[utk]` for a level (user, team, key). */
  readonly keys: readonly string[];
  readonly kinds: readonly KeyKind[];
  readonly holds: string;
  /** The module of core/store/redis/ that reads and writes them (with its scripts in lua/). */
  readonly owner: string;
}

/** What layout 1 holds. A key that matches none of these patterns is not Tollgate's. */
export const LAYOUT_FAMILIES: readonly KeyFamily[] = [
  {
    keys: [LAYOUT_VERSION_KEY],
    kinds: ['string'],
    holds: 'the format version of the layout',
    owner: 'layout-check.ts',
  },
  {
    keys: ['tg:seeded'],
    kinds: ['string'],
    holds: 'the marker of a seeded store: gone means Redis lost its data',
    owner: 'redis-health.ts',
  },
  {
    keys: [
      'tg:users',
      'tg:teams',
      'tg:apikey:*',
      'tg:{u:*}:user',
      'tg:{u:*}:keys',
      'tg:{t:*}:team',
      'tg:{k:*}:budget',
      'tg:accounts:changed',
    ],
    kinds: ['sorted set', 'string', 'hash', 'channel'],
    holds: "users, teams and API keys: specs, budgets, key records, the index by key hash, and the channel told of each user's change",
    owner: 'redis-accounts.ts',
  },
  {
    keys: ['tg:{[utk]:*}:ledger', 'tg:{[utk]:*}:holds', 'tg:{[utk]:*}:history', 'tg:{[utk]:*}:rl:*'],
    kinds: ['hash', 'sorted set'],
    holds: "each user's, team's and key's money spent and held, spending per period, and rate-limit windows",
    owner: 'redis-ledger.ts',
  },
  {
    keys: ['tg:alerts'],
    kinds: ['stream'],
    holds: 'budget alerts, written by the ledger (lua/settle.lua)',
    owner: 'redis-budget-alerts.ts',
  },
  {
    keys: ['tg:{u:*}:usage', 'tg:{[utk]:*}:daily:*', 'tg:[rp]:{*}:daily:*'],
    kinds: ['stream', 'hash'],
    holds: "each user's usage records, and daily totals per user, team, key, router and provider",
    owner: 'redis-usage-log.ts',
  },
  {
    keys: ['tg:{u:*}:resp:*', 'tg:{u:*}:resp-index', 'tg:{u:*}:resp-sizes'],
    kinds: ['string', 'sorted set', 'hash'],
    holds: "each user's stored answers of the Responses API",
    owner: 'redis-responses.ts',
  },
  {
    keys: ['tg:catalog', 'tg:catalog:changed'],
    kinds: ['string', 'channel'],
    holds: 'the routers and providers made at run time, and the channel told of each change',
    owner: 'redis-catalog.ts',
  },
  {
    keys: ['tg:prompt-ratios'],
    kinds: ['hash'],
    holds: 'reported to counted prompt tokens, shared by the gateways',
    owner: 'redis-prompt-ratios.ts',
  },
  {
    keys: ['tg:gateways:*'],
    kinds: ['string'],
    holds: 'the routing snapshot each gateway pod serves (with a TTL)',
    owner: 'redis-gateways.ts',
  },
  {
    keys: ['router.*', 'tg:q:{q:*}:*', 'tg:q:outcome:*', 'tg:q:reply:*', 'tg:q:freed', 'tg:p:{p:*}:slots', 'tg:p:{p:*}:recent'],
    kinds: ['stream', 'sorted set', 'hash', 'string', 'list', 'channel'],
    holds: "queue mode: each router's stream and waiting requests, each provider's slots, the outcomes and the answers to gateways",
    owner: 'redis-queue-gateways.ts, redis-queue-workers.ts, redis-queue-statistics.ts (names in queue-keys.ts)',
  },
  {
    keys: ['tg:p:{p:*}:metrics', 'tg:p:{p:*}:probe', 'tg:provider-health'],
    kinds: ['hash', 'string', 'channel'],
    holds:
      "each provider's live metrics and cool-down (the queue's scripts write them too), its one probe, and the channel told of changes",
    owner: 'redis-provider-health.ts (fields in provider-fields.ts)',
  },
];

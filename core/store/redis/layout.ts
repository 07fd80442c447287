// The Redis layout as a versioned contract between the processes that share one Redis: gateway
// pods, router workers (`tollgate router-worker`) and the operator, which may run different
// builds during a rolling upgrade. The data carry the format version they are laid out in
// (LAYOUT_VERSION_KEY), and every process checks it when it opens the store (layout-check.ts),
// so that no build reads or writes data in a layout it does not know. The tables below list
// the versions there have been (LAYOUT_VERSIONS), what the layout holds, family by family
// (LAYOUT_FAMILIES), and the shapes a usage record's entry has had (USAGE_ENTRY_REVISIONS), so
// that a reader sees all of it in one place; the key names themselves are built in keys.ts and
// queue-keys.ts, the usage entries written and read in usage-entry.ts.
//
// Raise the version (add one to LAYOUT_VERSIONS) when data are written in a way an earlier build
// would misread; raise OLDEST_READ_LAYOUT when this build stops reading a layout. A change an
// earlier build reads well, such as a field added to a usage entry, needs no new version, but
// the readers of the older shapes are declared here all the same.
import type { UsageRecord } from '../usage-log.ts';

/** One version of the layout, and what it changed from the one before. */
export interface LayoutVersion {
  readonly version: number;
  readonly changes: string;
}

/** Every layout there has been, oldest first: the last is the one this build writes. */
export const LAYOUT_VERSIONS: readonly [LayoutVersion, ...LayoutVersion[]] = [
  {
    version: 1,
    changes:
      'the layout of every Redis written before the version was kept (LAYOUT_FAMILIES), its usage entries in any shape of USAGE_ENTRY_REVISIONS',
  },
];

/** The format version of the layout this build writes. */
export const LAYOUT_VERSION: number = LAYOUT_VERSIONS[LAYOUT_VERSIONS.length - 1]!.version;

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
    keys: ['tg:{[utk]:*}:ledger', 'tg:{[utk]:*}:holds', 'tg:{[utk]:*}:history', 'tg:{[utk]:*}:rl:*', 'tg:{u:*}:settled:*'],
    kinds: ['hash', 'sorted set', 'string'],
    holds:
      "each user's, team's and key's money spent and held, spending per period, and rate-limit windows; with the failover loss bound on, a mark per recent settlement (expiring)",
    owner: 'redis-ledger.ts',
  },
  {
    // A Redis Cluster only (keys.ts MoneyHome): a team member's money in the team's slot, a key's with its user's.
    keys: [
      'tg:{t:*}:u:*:budget',
      'tg:{t:*}:u:*:ledger',
      'tg:{t:*}:u:*:holds',
      'tg:{t:*}:u:*:history',
      'tg:{t:*}:u:*:rl:*',
      'tg:{[ut]:*}:k:*:budget',
      'tg:{[ut]:*}:k:*:ledger',
      'tg:{[ut]:*}:k:*:holds',
      'tg:{[ut]:*}:k:*:history',
      'tg:{[ut]:*}:k:*:rl:*',
    ],
    kinds: ['hash', 'sorted set', 'string'],
    holds:
      "on a Redis Cluster, the same, at each user's money home: a team member's in the team's slot (with a copy of the user's budget fields), and a key's with its user's",
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
    owner: 'redis-usage-log.ts (its entries: usage-entry.ts)',
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
    keys: ['tg:session:*', 'tg:sign-in:*', 'tg:{sign-ins}:*'],
    kinds: ['string', 'sorted set'],
    holds:
      "single sign-on's sessions and its sign-ins under way, each by its secret's SHA-256, expiring with it; the sign-ins under way counted, in all and per client",
    owner: 'redis-sign-ins.ts',
  },
  {
    keys: ['tg:gateways:*'],
    kinds: ['string'],
    holds: 'the routing snapshot each gateway pod serves (with a TTL)',
    owner: 'redis-gateways.ts',
  },
  {
    keys: [
      'router.*',
      'tg:q:{q:*}:*',
      'tg:q:outcome:*',
      'tg:q:reply:*',
      'tg:q:freed',
      'tg:p:{p:*}:slots',
      'tg:p:{p:*}:recent',
      // On a Redis Cluster: a router's queue, its providers' and its requests' outcomes in its stream's slot.
      'tg:q:{router.*}:*',
      'tg:p:{router.*}:*:slots',
      'tg:p:{router.*}:*:recent',
    ],
    kinds: ['stream', 'sorted set', 'hash', 'string', 'list', 'channel'],
    holds: "queue mode: each router's stream and waiting requests, each provider's slots, the outcomes and the answers to gateways",
    owner: 'redis-queue-gateways.ts, redis-queue-workers.ts, redis-queue-statistics.ts (names in queue-keys.ts)',
  },
  {
    keys: ['tg:p:{p:*}:metrics', 'tg:p:{p:*}:probe', 'tg:provider-health', 'tg:p:{router.*}:*:metrics'],
    kinds: ['hash', 'string', 'channel'],
    holds:
      "each provider's live metrics and cool-down (the queue's scripts write them too), its one probe, and the channel told of changes",
    owner: 'redis-provider-health.ts (fields in provider-fields.ts)',
  },
  {
    keys: ['tg:engine:signals', 'tg:engine:scrape:*'],
    kinds: ['hash', 'string'],
    holds: "each engine replica's latest /metrics scrape and the requests sent to it since, and the gateway that scrapes it",
    owner: 'redis-engine-signals.ts',
  },
  {
    keys: ['tg:pfx:{*}'],
    kinds: ['sorted set'],
    holds: "each engine replica's recently sent prompt blocks, for prefix-cache affinity (bounded, expiring)",
    owner: 'redis-prefix-index.ts',
  },
];

// Usage entries. Each user's usage stream (keys.usage) holds one entry per record, its JSON in
// the entry's one field `r`. A stream is append-only and keeps its entries until the retention
// trims them, so entries of earlier builds stay beside this build's, in the shape of their time,
// and no pass at start-up could bring them to this build's shape: an entry cannot be written
// back under its id in the middle of a stream (XADD only appends), copying a user's stream to
// a new one would lose what gateways append meanwhile, and a build that is still running during
// a rolling upgrade goes on appending its own shape. Every shape is read instead, through the
// table below: each revision says which fields it added, and what an entry written before it
// meant by them. Entries written before a record was one JSON field (before revision 1) are not
// read: no build since has.

type MoneyField = 'cost_micros' | 'charged_micros' | 'uncovered_micros';

/** A usage record as its entry holds it in this build's shape: amounts of money as decimal strings (bigints). */
export type UsageEntry = Omit<UsageRecord, MoneyField> & Record<MoneyField, string>;

/** A field a usage entry gained after its first shape. */
export type LaterUsageField =
  | 'charged_micros'
  | 'uncovered_micros'
  | 'usage_anomaly'
  | 'requested_router'
  | 'team_id'
  | 'audio_seconds'
  | 'cached_tokens'
  | 'cache_write_tokens';

/** A usage entry in any of its shapes: the fields gained later may be missing. */
export type StoredUsageEntry = Omit<UsageEntry, LaterUsageField> & Partial<Pick<UsageEntry, LaterUsageField>>;

export interface UsageEntryRevision {
  /** Revision 1 is the first shape, which needs no reader: the table starts at 2. */
  readonly revision: number;
  readonly change: string;
  /** The fields the revision added: an entry that holds the first is of this revision or a later one. */
  readonly adds: readonly [LaterUsageField, ...LaterUsageField[]];
  /** What an entry written before the revision means by the fields it added. */
  readonly before: (entry: StoredUsageEntry) => Partial<Pick<UsageEntry, LaterUsageField>>;
}

/** A revision whose reader gives exactly the fields it says it added. */
function revision<F extends LaterUsageField>(declared: {
  readonly revision: number;
  readonly change: string;
  readonly adds: readonly [F, ...F[]];
  readonly before: (entry: StoredUsageEntry) => Pick<UsageEntry, NoInfer<F>>;
}): UsageEntryRevision {
  return declared;
}

/** The shapes of a usage entry since the first, oldest first: the last is the one this build writes. */
export const USAGE_ENTRY_REVISIONS: readonly [UsageEntryRevision, ...UsageEntryRevision[]] = [
  revision({
    revision: 2,
    change: 'costs told apart from charges: before, the cost was what was charged, all of it covered, and the usage reported all believed',
    adds: ['charged_micros', 'uncovered_micros', 'usage_anomaly'],
    before: (entry) => ({ charged_micros: entry.cost_micros, uncovered_micros: '0', usage_anomaly: null }),
  }),
  revision({
    revision: 3,
    change: 'fallbacks across routers: before, every request was served by the router asked for',
    adds: ['requested_router'],
    before: (entry) => ({ requested_router: entry.router }),
  }),
  revision({
    revision: 4,
    change: 'teams: a record made before them has none',
    adds: ['team_id'],
    before: () => ({ team_id: null }),
  }),
  revision({
    revision: 5,
    change: 'audio transcriptions: before them, no request was charged seconds of audio',
    adds: ['audio_seconds'],
    before: () => ({ audio_seconds: 0 }),
  }),
  revision({
    revision: 6,
    change: "prompt caches: before, no prompt token was charged as read from or written to a backend's prompt cache",
    adds: ['cached_tokens', 'cache_write_tokens'],
    before: () => ({ cached_tokens: 0, cache_write_tokens: 0 }),
  }),
];

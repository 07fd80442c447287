// Every Redis key Tollgate uses, in one place. A user's keys share the hash tag {u:<id>}, so a
// script that touches several of them stays within one cluster slot. The layout they make up,
// its format version and the module owning each family of keys are declared in layout.ts.
//
// The ledger's keys (levelKeys) are named two ways. On one Redis, each level has its own tag, as
// it always had: a user's {u:<id>}, a key's {k:<id>}, a team's {t:<id>}. On a Redis Cluster, one
// request's levels must share a slot, so a user's money has a home (MoneyHome): the team's slot for
// a member of a team (the team's own ledger is there), else the user's own; the user's keys' levels
// live with it. Moving a user to another team moves that money (redis-money-move.ts).
import { createHash } from 'node:crypto';
import type { UsageGroup } from '../usage-log.ts';

const names = new Map<string, string>();
/**
 * An engine replica's name in Redis: a digest of its route key (`<provider>@<address>`), never
 * the address itself, which may carry credentials (`https://user:secret@host`) that must not sit
 * in key names anyone with KEYS or MONITOR reads. Kept per process (a few per replica), and
 * forgotten all at once should replicas churn past a bound.
 */
export function replicaName(target: string): string {
  let name = names.get(target);
  if (name === undefined) {
    if (names.size >= 10_000) names.clear();
    name = createHash('sha256').update(target).digest('base64url').slice(0, 22);
    names.set(target, name);
  }
  return name;
}

const user = (id: string) => `tg:{u:${id}}`;
const team = (id: string) => `tg:{t:${id}}`;
const apiKeyLevel = (id: string) => `tg:{k:${id}}`;

/** Each group's daily totals key, around the id: keys.daily. */
export const DAILY_PREFIXES: Record<UsageGroup, readonly [string, string]> = {
  user: ['tg:{u:', '}'],
  router: ['tg:r:{', '}'],
  team: ['tg:{t:', '}'],
  key: ['tg:{k:', '}'],
  provider: ['tg:p:{', '}'],
};

/**
 * Where a request's money lives on a Redis Cluster: its user's id and team (undefined: none). On
 * one Redis, levelKeys takes none, and every level keeps its own tag.
 */
export interface MoneyHome {
  readonly user: string;
  readonly team: string | undefined;
}

/** The tag of a home's slot, and the prefix of its user's money keys there. */
function homePrefix(home: MoneyHome): string {
  return home.team === undefined ? user(home.user) : `${team(home.team)}:u:${home.user}`;
}

/** The ledger's keys of one level (a user, a key or a team): what lua/ledger-common.lua calls K. */
export interface LevelKeys {
  /** Hash with `budget` (micros, '' = unlimited) and `period`. */
  readonly budget: string;
  readonly ledger: string;
  readonly holds: string;
  readonly history: string;
  readonly prefix: string;
}

/**
 * The keys of the level a ledger subject names (ledger.ts subjectOf): a user's id, `key:<id>` or
 * `team:<id>`. A key's and a team's are laid out as a user's: the same scripts count them. With a
 * home (a cluster), a user's and a key's keys are the home's; a team member's budget fields are
 * copied into the home (`<prefix>:budget`), as the user's hash lives in the user's own slot.
 */
export function levelKeys(subject: string, home?: MoneyHome): LevelKeys {
  const colon = subject.indexOf(':');
  if (home !== undefined && !subject.startsWith('team:')) {
    const prefix =
      colon < 0 ? homePrefix(home) : `${home.team === undefined ? user(home.user) : team(home.team)}:k:${subject.slice(colon + 1)}`;
    const ownHash = colon < 0 && home.team === undefined;
    return {
      budget: ownHash ? keys.user(home.user) : `${prefix}:budget`,
      ledger: `${prefix}:ledger`,
      holds: `${prefix}:holds`,
      history: `${prefix}:history`,
      prefix,
    };
  }
  if (colon < 0)
    return {
      budget: keys.user(subject),
      ledger: keys.ledger(subject),
      holds: keys.holds(subject),
      history: keys.history(subject),
      prefix: user(subject),
    };
  const id = subject.slice(colon + 1);
  const prefix = subject.startsWith('team:') ? team(id) : apiKeyLevel(id);
  return {
    budget: subject.startsWith('team:') ? keys.team(id) : `${prefix}:budget`,
    ledger: `${prefix}:ledger`,
    holds: `${prefix}:holds`,
    history: `${prefix}:history`,
    prefix,
  };
}

export const keys = {
  /** Sorted set: the block hashes of prompts a replica (a route key) was sent, scored by when (ms): prefix-index.ts. */
  prefixIndex: (replica: string) => `tg:pfx:{${replicaName(replica)}}`,
  /** Hash: spec (JSON UserSpec), created_at, budget (micros, '' = unlimited), period ('' | daily | weekly | monthly). */
  user: (id: string) => `${user(id)}:user`,
  /** Hash: spent, reserved (micros), ptype and pidx (the budget period being counted), lease_until (ms: a lease may be open until then). */
  ledger: (id: string) => `${user(id)}:ledger`,
  /** Sorted set: members `<hold id>|<micros>`, scored by expiry (ms). */
  holds: (id: string) => `${user(id)}:holds`,
  /** String: what a settlement charged, marking it done (the failover loss bound, lua/settle.lua); expires. In the money's home on a cluster. */
  settled: (id: string, settlement: string, home?: MoneyHome) => `${home ? homePrefix(home) : user(id)}:settled:${settlement}`,
  /** On a cluster, the prefixes of the money a team's slot holds for its members: their own, and their keys' (keys.ts MoneyHome). */
  membersMoney: (id: string) => [`${team(id)}:u:`, `${team(id)}:k:`] as const,
  /** Hash: `<period kind>:<period index>` -> micros spent in that period. */
  history: (id: string) => `${user(id)}:history`,
  /** Hash: sliding-window counters of the user's rate limits on one router. */
  rate: (id: string, scope: string) => `${user(id)}:rl:${scope}`,
  /** Hash: key id -> JSON ApiKeyRecord. */
  userKeys: (id: string) => `${user(id)}:keys`,
  /** String: JSON StoredResponse of the Responses API (store/responses.ts), expiring with the usage retention. */
  storedResponse: (id: string, responseId: string) => `${user(id)}:resp:${responseId}`,
  /** Sorted set: the user's stored response ids, scored by when each expires (ms): oldest first (lua/response-write.lua). */
  storedResponseIndex: (id: string) => `${user(id)}:resp-index`,
  /** Hash: the user's stored response id -> its bytes, and `total` (lua/response-write.lua). */
  storedResponseSizes: (id: string) => `${user(id)}:resp-sizes`,
  /** Stream of the user's usage records. */
  usage: (id: string) => `${user(id)}:usage`,
  /** Every key of one user, for deleting a user. */
  userPattern: (id: string) => `${user(id)}:*`,
  /** String: JSON {user_id, key_id} of the API key with this SHA-256 hash. */
  apiKey: (hash: string) => `tg:apikey:${hash}`,
  /** Sorted set of user ids (all scores 0), listed in lexical order. */
  users: 'tg:users',
  /** Hash: spec (JSON TeamSpec), created_at, budget and period (as a user's); the team's ledger keys share its prefix (levelKeys). */
  team: (id: string) => `${team(id)}:team`,
  /** Every key of one team, for deleting it. */
  teamPattern: (id: string) => `${team(id)}:*`,
  /** Sorted set of team ids (all scores 0). */
  teams: 'tg:teams',
  /** Every ledger key of one API key (its budget hash, ledger, holds, history, rate limits), for deleting it. */
  apiKeyLevelPattern: (id: string) => `${apiKeyLevel(id)}:*`,
  /**
   * Hash: the totals of one UTC day of a team, user, key, router or provider (DAILY_PREFIXES): a
   * user's, key's and team's live with their other keys, so they go when those are deleted.
   */
  daily: (group: UsageGroup, id: string, day: string) => `${DAILY_PREFIXES[group][0]}${id}${DAILY_PREFIXES[group][1]}:daily:${day}`,
  /** Hash: `<ratio bucket>:<router>` -> requests; reported / counted prompt tokens (store/prompt-ratios.ts). */
  promptRatios: 'tg:prompt-ratios',
  /** String: a single sign-on session (JSON SessionRecord), by its secret's SHA-256; expires with the session (store/sign-ins.ts). */
  session: (hash: string) => `tg:session:${hash}`,
  /** String: a sign-in under way (JSON PendingSignIn), by its state's SHA-256; expires after 10 minutes. */
  pendingSignIn: (hash: string) => `tg:sign-in:${hash}`,
  /**
   * Sorted set: every sign-in under way (member: its state's SHA-256, score: when it ends, ms), for
   * their bound in all; expires with its last. Tagged with signInsOfClient: one script counts both.
   */
  signInsUnderWay: 'tg:{sign-ins}:under-way',
  /** Sorted set: the sign-ins under way from one client, by the SHA-256 of its address, as signInsUnderWay. */
  signInsOfClient: (hash: string) => `tg:{sign-ins}:client:${hash}`,
  /** Stream of budget alerts (lua/settle.lua raises them; store/budget-alerts.ts delivers them), each entry's field `a` JSON. */
  alerts: 'tg:alerts',
  /** String: JSON Catalog {revision, routers, providers}. */
  catalog: 'tg:catalog',
  /** Pub/sub channel told after every catalog write. */
  catalogChanged: 'tg:catalog:changed',
  /** Pub/sub channel told the id of a user whose record or keys changed (caches drop them). */
  accountsChanged: 'tg:accounts:changed',
  /**
   * String: set once a gateway has seeded the store (the admin key, the config file's users and
   * routers). Its absence on a store that was seeded means Redis lost its data (restarted
   * without persistence, or flushed), and the gateways seed it again.
   */
  seeded: 'tg:seeded',
  /** String with a TTL: JSON {version, at} of the routing snapshot a gateway pod serves (Kubernetes mode). */
  gateway: (pod: string) => `tg:gateways:${pod}`,
  /** Every gateway's report, for SCAN. */
  gatewayPattern: 'tg:gateways:*',
  /**
   * Hash of the engines' signals (redis-engine-signals.ts): `s:<target>` -> JSON of its latest
   * scrape, `n:<target>` -> requests sent to it since; expires when no gateway scrapes any more.
   */
  engineSignals: 'tg:engine:signals',
  /** String with a TTL: the gateway that scrapes the target's /metrics (one at a time, fleet-wide). */
  engineScrape: (target: string) => `tg:engine:scrape:${replicaName(target)}`,
} as const;

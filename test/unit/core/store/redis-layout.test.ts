// The layout's table (core/store/redis/layout.ts) against the names keys.ts and queue-keys.ts
// build: every key and channel belongs to exactly one family, every family is used, and all
// but the queue streams lie under the pattern that tells whether a Redis holds Tollgate data.
// A key added to keys.ts without a sample here does not compile; one outside every family fails.
// The versions it declares follow one another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keys, levelKeys } from '../../../../core/store/redis/keys.ts';
import {
  DATA_PATTERN,
  type KeyFamily,
  LAYOUT_FAMILIES,
  LAYOUT_VERSION,
  LAYOUT_VERSION_KEY,
  LAYOUT_VERSIONS,
  OLDEST_READ_LAYOUT,
  UNVERSIONED_LAYOUT,
} from '../../../../core/store/redis/layout.ts';
import { layoutKeyNames, QUEUE_FREED_CHANNEL, queueKeyNames, queueKeys } from '../../../../core/store/redis/queue-keys.ts';
import { PROVIDER_HEALTH_CHANNEL } from '../../../../core/store/redis/provider-fields.ts';

/** Names keys.ts builds, by entry; its SCAN patterns (the `*Pattern` entries) are not keys. */
const FROM_KEYS = {
  user: [keys.user('alice')],
  ledger: [keys.ledger('alice')],
  holds: [keys.holds('alice')],
  settled: [keys.settled('alice', 's-1')],
  membersMoney: [],
  history: [keys.history('alice')],
  rate: [keys.rate('alice', 'chat')],
  userKeys: [keys.userKeys('alice')],
  storedResponse: [keys.storedResponse('alice', 'resp_1')],
  storedResponseIndex: [keys.storedResponseIndex('alice')],
  storedResponseSizes: [keys.storedResponseSizes('alice')],
  usage: [keys.usage('alice')],
  userPattern: [],
  apiKey: [keys.apiKey('0f3a')],
  users: [keys.users],
  team: [keys.team('research')],
  teamPattern: [],
  teams: [keys.teams],
  apiKeyLevelPattern: [],
  daily: (['user', 'team', 'key', 'router', 'provider'] as const).map((group) => keys.daily(group, 'x', '2026-03-01')),
  promptRatios: [keys.promptRatios],
  session: [keys.session('9f86d0')],
  pendingSignIn: [keys.pendingSignIn('9f86d0')],
  signInsUnderWay: [keys.signInsUnderWay],
  signInsOfClient: [keys.signInsOfClient('12ca17')],
  alerts: [keys.alerts],
  catalog: [keys.catalog],
  catalogChanged: [keys.catalogChanged],
  accountsChanged: [keys.accountsChanged],
  seeded: [keys.seeded],
  gateway: [keys.gateway('gateway-7d9f')],
  gatewayPattern: [],
  engineSignals: [keys.engineSignals],
  engineScrape: [keys.engineScrape('vllm-a@http://10.0.0.7:8000')],
  prefixIndex: [keys.prefixIndex('engine@http://10.0.0.7:8000')],
} satisfies Record<keyof typeof keys, readonly string[]>;

const SAMPLES: readonly string[] = [
  LAYOUT_VERSION_KEY,
  ...Object.values(FROM_KEYS).flat(),
  // The levels of an API key and a team, and their rate-limit windows (redis-ledger.ts).
  ...['key:k1', 'team:research', 'alice'].flatMap((subject) => {
    const level = levelKeys(subject);
    return [level.budget, level.ledger, level.holds, level.history, `${level.prefix}:rl:chat`];
  }),
  // On a cluster, at the money's home: a team member's, and a user's without a team.
  ...[
    { user: 'alice', team: 'research' },
    { user: 'bob', team: undefined },
  ].flatMap((home) =>
    ['key:k1', 'team:research', home.user].flatMap((subject) => {
      const level = levelKeys(subject, home);
      return [level.budget, level.ledger, level.holds, level.history, `${level.prefix}:rl:chat`];
    }),
  ),
  // Queue mode's, on one Redis and on a cluster.
  ...(['one', 'cluster'] as const).flatMap((layout) => {
    const names = queueKeyNames(layout);
    return [...layoutKeyNames(layout).map((name) => names[name]('chat', 'only')), names.reply('gw-1')];
  }),
  `${queueKeys.callers('chat')}:alice`, // on one Redis, a caller's waiting ids
  QUEUE_FREED_CHANNEL,
  PROVIDER_HEALTH_CHANNEL,
  'tg:p:{p:openai}:probe', // redis-provider-health.ts probeKey
];

/** A Redis glob (`*`, `?`, `[...]`) as a regular expression over the whole name. */
function globRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i);
      source += glob.slice(i, end + 1);
      i = end;
    } else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

const matches = (family: KeyFamily, name: string) => family.keys.some((glob) => globRegExp(glob).test(name));

test('every key and channel of the store belongs to exactly one family of the layout', () => {
  for (const name of SAMPLES) {
    const owners = LAYOUT_FAMILIES.filter((family) => matches(family, name)).map((family) => family.owner);
    assert.equal(owners.length, 1, `${name}: ${owners.length === 0 ? 'in no family' : `in ${owners.join(', ')}`}`);
  }
});

test('every pattern of the layout names keys the store uses', () => {
  for (const family of LAYOUT_FAMILIES) {
    for (const glob of family.keys) {
      assert.ok(
        SAMPLES.some((name) => globRegExp(glob).test(name)),
        `${glob} (${family.owner}) matches none`,
      );
    }
  }
});

test('every family but the queue streams lies under the pattern that finds Tollgate data', () => {
  const data = globRegExp(DATA_PATTERN);
  const outside = LAYOUT_FAMILIES.flatMap((family) => family.keys).filter((glob) => !data.test(glob));
  assert.deepEqual(outside, ['router.*']);
  assert.ok(!data.test(queueKeys.stream('chat')));
});

test('the layout versions follow one another from 1, and the ones this build reads are among them', () => {
  assert.deepEqual(
    LAYOUT_VERSIONS.map((layout) => layout.version),
    LAYOUT_VERSIONS.map((_, i) => i + 1),
  );
  const versions = LAYOUT_VERSIONS.map((layout) => layout.version);
  assert.equal(versions.at(-1), LAYOUT_VERSION);
  assert.ok(versions.includes(OLDEST_READ_LAYOUT));
  assert.ok(versions.includes(UNVERSIONED_LAYOUT));
});

// The store's contract for accounts, the catalog and the usage log: one suite, run against the
// in-memory store (memory-store.test.ts) and against a real redis-server (redis-store.test.ts),
// so both behave the same. The ledger has its own suite (ledger-contract.ts, run by
// ledger.test.ts) on the same kind of factory: a suite for another concern goes beside them
// as `describe<Concern>Contract(name, harness)` and is called from both test files.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { hashKey, hintOf } from '../../../../core/accounts/api-keys.ts';
import { ProviderSpec } from '../../../../core/resources/provider.ts';
import { RouterSpec } from '../../../../core/resources/router.ts';
import { UserSpec, type UserSpecInput } from '../../../../core/resources/user.ts';
import { TeamSpec } from '../../../../core/resources/team.ts';
import { KeyLimits, keyLimitsOf } from '../../../../core/resources/key-limits.ts';
import type { ApiKeyRecord } from '../../../../core/store/accounts.ts';
import { ConflictError, KeyLimitError, NotFoundError } from '../../../../core/store/store-errors.ts';
import type { Store } from '../../../../core/store/store.ts';
import { eventually } from '../../../support/eventually.ts';
import { EMPTY_TOTALS, type UsageRecord, type UsageTotals } from '../../../../core/store/usage-log.ts';
import { RATIO_HALVING_TOTAL, ratioBucket, ratioQuantile } from '../../../../core/store/prompt-ratios.ts';

/** How each test gets its store: fresh and empty, and disposed of afterwards. */
export interface StoreHarness {
  make(): Promise<Store>;
  dispose(store: Store): Promise<void>;
  /** Another store on the same state as `store`, as a second gateway has (memory: `store` itself). */
  peer(store: Store): Promise<Store>;
}

/** Usage retention of the stores under test. */
export const RETENTION_MS = 7 * 86_400_000;
/** What one user's stored responses may take in the stores under test: small, to be passed. */
export const RESPONSE_LIMITS = { bytesPerUser: 4096, countPerUser: 5 } as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const CREATED = new Date(Date.UTC(2026, 0, 15, 9, 30));

export const userSpec = (id: string, spec: Partial<UserSpecInput> = {}) => UserSpec.parse({ id, name: `User ${id}`, ...spec });

export function apiKey(userId: string, id: string, secret = `tg-secret-of-${userId}-${id}`, created = CREATED): ApiKeyRecord {
  return {
    id,
    user_id: userId,
    name: `key ${id}`,
    hash: hashKey(secret),
    hint: hintOf(secret),
    created_at: created.toISOString(),
    expires_at: null,
    revoked_at: null,
  };
}

const router = (name: string) =>
  RouterSpec.parse({ name, type: 'text-generation', aliases: [], costs: { prompt_tokens: '0.15', completion_tokens: '0.6' } });
const provider = (id: string, routerName: string) => ProviderSpec.parse({ type: 'simulator', id, router: routerName, model_name: 'sim' });

let records = 0;
export function usageRecord(userId: string, time: number, fields: Partial<UsageRecord> = {}): UsageRecord {
  return {
    id: `rec-${++records}`,
    time,
    user_id: userId,
    key_id: 'k1',
    team_id: null,
    router: 'chat',
    requested_router: fields.router ?? 'chat',
    provider: 'sim-1',
    endpoint: 'chat',
    status: 200,
    prompt_tokens: 10,
    completion_tokens: 20,
    audio_seconds: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    cost_micros: 1_500n,
    charged_micros: 1_500n,
    uncovered_micros: 0n,
    usage_anomaly: null,
    kwh: 0.5,
    kgco2eq: 0.25,
    latency_ms: 120,
    ttft_ms: 40,
    incomplete: false,
    ...fields,
  };
}

function sum(list: UsageRecord[]): UsageTotals {
  return list.reduce<UsageTotals>(
    (t, r) => ({
      requests: t.requests + 1,
      prompt_tokens: t.prompt_tokens + r.prompt_tokens,
      completion_tokens: t.completion_tokens + r.completion_tokens,
      cached_tokens: t.cached_tokens + r.cached_tokens,
      cache_write_tokens: t.cache_write_tokens + r.cache_write_tokens,
      cost_micros: t.cost_micros + r.cost_micros,
      uncovered_micros: t.uncovered_micros + r.uncovered_micros,
      kwh: t.kwh + r.kwh,
      kgco2eq: t.kgco2eq + r.kgco2eq,
    }),
    EMPTY_TOTALS,
  );
}

const day = (time: number) => new Date(time).toISOString().slice(0, 10);

export function describeStoreContract(name: string, harness: StoreHarness): void {
  describe(`${name}: the store contract`, () => {
    let store: Store;
    const peers: Store[] = [];
    beforeEach(async () => {
      store = await harness.make();
    });
    afterEach(async () => {
      for (const peer of peers.splice(0)) if (peer !== store) await harness.dispose(peer);
      await harness.dispose(store);
    });
    const peer = async () => {
      const other = await harness.peer(store);
      peers.push(other);
      return other;
    };

    describeAccounts(() => store, peer);
    describeTeams(() => store, peer);
    describeResponses(() => store, peer);
    describeCatalog(() => store, peer);
    describeUsageLog(() => store);
    describePromptRatios(() => store, peer);
    describeGatewayReports(() => store, peer);
    describeSignIns(() => store, peer);
  });
}

function describeSignIns(current: () => Store, peer: () => Promise<Store>): void {
  describe('single sign-on', () => {
    const session = {
      user_id: 'ann',
      issuer: 'idp',
      subject: 'ann@example.com',
      created_at: '2026-03-01T12:00:00.000Z',
      expires_at: '2026-03-02T00:00:00.000Z',
    };
    test('a session is found by its secret on every gateway until it is ended; another secret finds nothing', async () => {
      const other = await peer();
      await current().signIns.createSession('secret-1', session, 60_000);
      assert.deepEqual(await other.signIns.session('secret-1'), session);
      assert.equal(await other.signIns.session('secret-2'), undefined);
      assert.equal(await other.signIns.endSession('secret-1'), true);
      assert.equal(await current().signIns.session('secret-1'), undefined);
      assert.equal(await current().signIns.endSession('secret-1'), false);
    });

    test('a sign-in under way is taken once, by whichever gateway the answer reaches', async () => {
      const other = await peer();
      const pending = { code_verifier: 'verifier', nonce: 'nonce', return_to: '/playground/' };
      const start = { ttlMs: 60_000, client: '192.0.2.1', limits: { total: 100, perClient: 100 } };
      assert.equal(await current().signIns.beginSignIn('state-1', pending, start), 'begun');
      const taken = await Promise.all([other.signIns.takeSignIn('state-1'), current().signIns.takeSignIn('state-1')]);
      assert.deepEqual(
        taken.filter((found) => found !== undefined),
        [pending],
      );
    });
  });
}

function describeGatewayReports(current: () => Store, peer: () => Promise<Store>): void {
  describe('gateway reports', () => {
    test('each pod reports the version it serves; a newer report replaces the last, a forgotten one is gone, for every gateway', async () => {
      const at = new Date('2026-03-01T12:00:00.000Z');
      const other = await peer();
      await current().gateways.report('gw-b', 'v1', 60_000, at);
      await other.gateways.report('gw-a', 'v1', 60_000, at);
      await current().gateways.report('gw-a', 'v2', 60_000, at);
      assert.deepEqual(await other.gateways.list(), [
        { pod: 'gw-a', version: 'v2', at: at.toISOString() },
        { pod: 'gw-b', version: 'v1', at: at.toISOString() },
      ]);
      await other.gateways.forget('gw-b');
      assert.deepEqual(
        (await current().gateways.list()).map((report) => report.pod),
        ['gw-a'],
      );
    });
  });
}

function describePromptRatios(current: () => Store, peer: () => Promise<Store>): void {
  describe('prompt ratios', () => {
    test('observations of every gateway add up per router, and a high quantile reads back from them', async () => {
      const other = await peer();
      // 98 requests at a ratio of 0.8, two at 2.5 on one router; one at 1.2 on another.
      await current().promptRatios.add(
        new Map([
          [
            'chat',
            new Map([
              [ratioBucket(0.8), 60],
              [ratioBucket(2.5), 1],
            ]),
          ],
        ]),
      );
      await other.promptRatios.add(
        new Map([
          [
            'chat',
            new Map([
              [ratioBucket(0.8), 38],
              [ratioBucket(2.5), 1],
            ]),
          ],
          ['other', new Map([[ratioBucket(1.2), 1]])],
        ]),
      );
      const counts = await current().promptRatios.read();
      assert.deepEqual(
        counts.get('chat'),
        new Map([
          [ratioBucket(0.8), 98],
          [ratioBucket(2.5), 2],
        ]),
      );
      assert.equal(ratioQuantile(counts.get('chat')!, 0.99), 2.5);
      assert.equal(ratioQuantile(counts.get('chat')!, 0.98), 0.8125); // 0.8 rounded up to a 1/16
      assert.equal(ratioQuantile(counts.get('other')!, 0.99), 1.25);
    });

    test('once a router has more observations than kept, its counts are halved: old ones fade', async () => {
      await current().promptRatios.add(
        new Map([
          [
            'chat',
            new Map([
              [ratioBucket(3), 1],
              [ratioBucket(1), RATIO_HALVING_TOTAL],
            ]),
          ],
          ['other', new Map([[16, 5]])],
        ]),
      );
      const counts = await current().promptRatios.read();
      assert.deepEqual(counts.get('chat'), new Map([[ratioBucket(1), RATIO_HALVING_TOTAL / 2]]));
      assert.deepEqual(counts.get('other'), new Map([[16, 5]]));
    });
  });
}

function describeResponses(current: () => Store, peer: () => Promise<Store>): void {
  describe('stored responses', () => {
    test('a stored response reads back for its user on every gateway, never for another, and is gone once deleted', async () => {
      const other = await peer();
      const stored = { response: { id: 'resp_1', output: [] }, messages: [{ role: 'user', content: 'hi' }], turns: 2 };
      const json = JSON.stringify(stored);
      await current().responses.put('alice', 'resp_1', json);
      assert.deepEqual(await other.responses.get('alice', 'resp_1'), { ...stored, bytes: json.length });
      assert.equal(await other.responses.get('bob', 'resp_1'), undefined);
      assert.equal(await current().responses.delete('bob', 'resp_1'), false);
      assert.equal(await current().responses.delete('alice', 'resp_1'), true);
      assert.equal(await other.responses.get('alice', 'resp_1'), undefined);
    });

    /** A stored response of `bytes` bytes of JSON. */
    const sized = (id: string, bytes: number) => {
      const head = JSON.stringify({ response: { id }, messages: [{ role: 'user', content: '' }] });
      return JSON.stringify({ response: { id }, messages: [{ role: 'user', content: 'x'.repeat(bytes - head.length) }] });
    };
    const held = async (user: string, ids: string[]) => {
      const found: string[] = [];
      for (const id of ids) if (await current().responses.get(user, id)) found.push(id);
      return found;
    };

    test("past a user's most stored responses, the oldest go first; another user keeps theirs", async () => {
      await current().responses.put('bob', 'b', sized('b', 100));
      const ids = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'];
      for (const id of ids) await current().responses.put('alice', id, sized(id, 100));
      assert.deepEqual(await held('alice', ids), ['r3', 'r4', 'r5', 'r6', 'r7']);
      assert.deepEqual(await held('bob', ['b']), ['b']);
    });

    test("past a user's most bytes, the oldest go first, whatever their number", async () => {
      const ids = ['s1', 's2', 's3', 's4'];
      for (const id of ids) await current().responses.put('alice', id, sized(id, 1500));
      // 4,096 bytes hold two of 1,500: each new one lets the oldest go.
      assert.deepEqual(await held('alice', ids), ['s3', 's4']);
      // One as large as the limit stays, alone.
      await current().responses.put('alice', 'big', sized('big', 4096));
      assert.deepEqual(await held('alice', [...ids, 'big']), ['big']);
    });

    test('a deleted or replaced response frees its room, and is not counted twice', async () => {
      await current().responses.put('alice', 'a', sized('a', 1500));
      await current().responses.put('alice', 'b', sized('b', 1500));
      assert.equal(await current().responses.delete('alice', 'a'), true);
      await current().responses.put('alice', 'c', sized('c', 1500));
      assert.deepEqual(await held('alice', ['a', 'b', 'c']), ['b', 'c']);
      // Storing c again in its place takes no more room: b stays.
      await current().responses.put('alice', 'c', sized('c', 1500));
      assert.deepEqual(await held('alice', ['b', 'c']), ['b', 'c']);
      await current().responses.put('alice', 'd', sized('d', 1500));
      assert.deepEqual(await held('alice', ['b', 'c', 'd']), ['c', 'd']);
    });
  });
}

function describeTeams(current: () => Store, peer: () => Promise<Store>): void {
  describe('teams and key limits', () => {
    const team = (id: string, fields: Partial<TeamSpec> = {}) => TeamSpec.parse({ id, name: `Team ${id}`, ...fields });

    test('a created team reads back the same, is listed by id a page at a time, and its id cannot be taken twice', async () => {
      const spec = team('red', { budget: '100', budget_period: 'monthly', priority: 3, rate_limits: { requests_per_minute: 50 } });
      const created = await current().accounts.createTeam(spec, CREATED);
      assert.deepEqual(created, { ...spec, created_at: CREATED.toISOString() });
      assert.deepEqual(await current().accounts.getTeam('red'), created);
      await assert.rejects(current().accounts.createTeam(team('red'), CREATED), ConflictError);
      for (const id of ['blue', 'green']) await current().accounts.createTeam(team(id), CREATED);
      const first = await current().accounts.listTeams(null, 2);
      assert.deepEqual(
        first.items.map((t) => t.id),
        ['blue', 'green'],
      );
      assert.deepEqual(
        (await current().accounts.listTeams(first.next, 2)).items.map((t) => t.id),
        ['red'],
      );
    });

    test("a key authenticates with its user's team; a team's change reaches every gateway's listeners, and its deletion leaves the user teamless", async () => {
      const other = await peer();
      const heard: (string | null)[] = [];
      const stop = other.accounts.onAccountChange((subject) => heard.push(subject));
      await current().accounts.createTeam(team('red', { budget: '10' }), CREATED);
      await current().accounts.createUser(userSpec('alice', { team: 'red' }), CREATED);
      const key = apiKey('alice', 'k1');
      await current().accounts.addKey(key);
      const found = await other.accounts.findKey(key.hash);
      assert.equal(found?.team?.id, 'red');
      assert.equal(found?.team?.budget, '10');
      await current().accounts.updateTeam(team('red', { budget: '20' }));
      assert.equal((await other.accounts.findKey(key.hash))?.team?.budget, '20');
      assert.equal(await current().accounts.deleteTeam('red'), true);
      assert.equal(await current().accounts.deleteTeam('red'), false);
      const after = await other.accounts.findKey(key.hash);
      assert.equal(after?.user.team, 'red');
      assert.equal(after?.team, undefined);
      await assert.rejects(current().accounts.updateTeam(team('red')), NotFoundError);
      await eventually(() => heard.filter((s) => s === 'team:red').length >= 3, 'the peer heard of the team changes');
      stop();
    });

    test("a user's creation reaches every gateway's listeners, heard there by the time caughtUp() resolves", async () => {
      const other = await peer();
      const heard: (string | null)[] = [];
      const stop = other.accounts.onAccountChange((subject) => heard.push(subject));
      await other.accounts.caughtUp(); // listening from here on
      await current().accounts.createUser(userSpec('alice'), CREATED);
      await other.accounts.caughtUp();
      assert.ok(heard.includes('alice'), `heard: ${JSON.stringify(heard)}`);
      stop();
    });

    test("a key's own budget and limits are kept, replaced, and survive its revocation", async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      const limits = KeyLimits.parse({
        budget: '5',
        budget_period: 'daily',
        allowed_routers: ['chat'],
        rate_limits: { requests_per_minute: 3 },
      });
      await current().accounts.addKey({ ...apiKey('alice', 'app'), ...limits });
      assert.deepEqual(pickLimits((await current().accounts.listKeys('alice'))[0]!), limits);
      const raised = KeyLimits.parse({ budget: '7', allowed_routers: [] });
      assert.deepEqual(pickLimits((await current().accounts.updateKey('alice', 'app', raised))!), raised);
      const revoked = await current().accounts.revokeKey('alice', 'app', CREATED);
      assert.deepEqual(pickLimits(revoked!), raised, 'an empty list of routers stays a list');
      assert.equal(await current().accounts.updateKey('alice', 'nope', raised), undefined);
      assert.equal((await current().ledger.balance('key:app', CREATED.getTime(), 'alice')).budgetMicros, 7_000_000n);
    });
  });
}

const pickLimits = keyLimitsOf;

function describeAccounts(current: () => Store, peer: () => Promise<Store>): void {
  describe('accounts', () => {
    test('a created user is returned with its creation time, and read back the same', async () => {
      const spec = userSpec('alice', {
        budget: '12.345678',
        budget_period: 'monthly',
        allowed_routers: ['chat'],
        rate_limits: { requests_per_minute: 5 },
      });
      const created = await current().accounts.createUser(spec, CREATED);
      assert.deepEqual(created, { ...spec, created_at: CREATED.toISOString() });
      assert.deepEqual(await current().accounts.getUser('alice'), created);
    });

    test('an unknown user is undefined', async () => {
      assert.equal(await current().accounts.getUser('nobody'), undefined);
    });

    test('creating a user whose id is taken is a ConflictError and leaves the first one alone', async () => {
      const first = await current().accounts.createUser(userSpec('alice', { name: 'First' }), CREATED);
      await assert.rejects(current().accounts.createUser(userSpec('alice', { name: 'Second' }), new Date()), ConflictError);
      assert.deepEqual(await current().accounts.getUser('alice'), first);
    });

    test('of two gateways creating the same user at once, exactly one succeeds', async () => {
      const other = await peer();
      const results = await Promise.allSettled([
        current().accounts.createUser(userSpec('alice', { name: 'From one' }), CREATED),
        other.accounts.createUser(userSpec('alice', { name: 'From two' }), CREATED),
      ]);
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      const rejected = results.filter((r) => r.status === 'rejected');
      assert.equal(fulfilled.length, 1);
      assert.equal(rejected.length, 1);
      assert.ok((rejected[0] as PromiseRejectedResult).reason instanceof ConflictError);
      assert.deepEqual(await current().accounts.getUser('alice'), (fulfilled[0] as PromiseFulfilledResult<unknown>).value);
    });

    test('users are listed by id, a page at a time, each page naming where the next starts', async () => {
      for (const id of ['dave', 'alice', 'eve', 'carol', 'bob']) await current().accounts.createUser(userSpec(id), CREATED);
      const ids = async (after: string | null) => {
        const page = await current().accounts.listUsers(after, 2);
        return { ids: page.items.map((u) => u.id), next: page.next };
      };
      assert.deepEqual(await ids(null), { ids: ['alice', 'bob'], next: 'bob' });
      assert.deepEqual(await ids('bob'), { ids: ['carol', 'dave'], next: 'dave' });
      assert.deepEqual(await ids('dave'), { ids: ['eve'], next: null });
    });

    test('a last page that is exactly full has no next page', async () => {
      for (const id of ['a1', 'a2', 'a3', 'a4']) await current().accounts.createUser(userSpec(id), CREATED);
      const second = await current().accounts.listUsers('a2', 2);
      assert.deepEqual(
        second.items.map((u) => u.id),
        ['a3', 'a4'],
      );
      assert.equal(second.next, null);
      assert.deepEqual(await current().accounts.listUsers(null, 10), {
        items: await Promise.all(['a1', 'a2', 'a3', 'a4'].map((id) => current().accounts.getUser(id))),
        next: null,
      });
    });

    test('updating replaces the spec and keeps the creation time', async () => {
      await current().accounts.createUser(userSpec('alice', { budget: '5' }), CREATED);
      const next = userSpec('alice', { name: 'Alice B.', budget: null, role: 'admin' });
      const updated = await current().accounts.updateUser(next);
      assert.deepEqual(updated, { ...next, created_at: CREATED.toISOString() });
      assert.deepEqual(await current().accounts.getUser('alice'), updated);
    });

    test('updating an unknown user is a NotFoundError and creates nothing', async () => {
      await assert.rejects(current().accounts.updateUser(userSpec('ghost')), NotFoundError);
      assert.equal(await current().accounts.getUser('ghost'), undefined);
    });

    test('deleting a user removes them, their keys and their usage; deleting again says there was none', async () => {
      const key = apiKey('alice', 'k1');
      await current().accounts.createUser(userSpec('alice'), CREATED);
      await current().accounts.createUser(userSpec('bob'), CREATED);
      await current().accounts.addKey(key);
      await current().usage.append(usageRecord('alice', Date.now() - HOUR));
      assert.equal(await current().accounts.deleteUser('alice'), true);
      assert.equal(await current().accounts.getUser('alice'), undefined);
      assert.equal(await current().accounts.findKey(key.hash), undefined);
      assert.deepEqual(await current().accounts.listKeys('alice'), []);
      assert.deepEqual(
        (await current().accounts.listUsers(null, 10)).items.map((u) => u.id),
        ['bob'],
      );
      assert.deepEqual((await current().usage.query('alice', { limit: 10 })).records, []);
      assert.equal(await current().accounts.deleteUser('alice'), false);
    });

    test('a user created again under a deleted id starts without the old keys', async () => {
      const key = apiKey('alice', 'k1');
      await current().accounts.createUser(userSpec('alice'), CREATED);
      await current().accounts.addKey(key);
      await current().accounts.deleteUser('alice');
      await current().accounts.createUser(userSpec('alice'), CREATED);
      assert.equal(await current().accounts.findKey(key.hash), undefined);
      assert.deepEqual(await current().accounts.listKeys('alice'), []);
    });

    test('keys are listed in the order they were made, with their hash and hint but never the secret', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      const secret = 'tg-the-very-secret-value-0123456789';
      const later = apiKey('alice', 'k2', secret, new Date(CREATED.getTime() + 1000));
      const earlier = apiKey('alice', 'k1');
      await current().accounts.addKey(later);
      await current().accounts.addKey(earlier);
      const listed = await current().accounts.listKeys('alice');
      assert.deepEqual(listed, [earlier, later]);
      assert.equal(JSON.stringify(listed).includes(secret), false);
      assert.equal(listed[1]!.hint, 'tg-…6789');
    });

    test('a key for an unknown user is a NotFoundError', async () => {
      await assert.rejects(current().accounts.addKey(apiKey('ghost', 'k1')), NotFoundError);
    });

    test('a key id the user already has, or a secret already in use, is a ConflictError', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      await current().accounts.createUser(userSpec('bob'), CREATED);
      await current().accounts.addKey(apiKey('alice', 'k1', 'tg-one'));
      await assert.rejects(current().accounts.addKey(apiKey('alice', 'k1', 'tg-two')), ConflictError);
      await assert.rejects(current().accounts.addKey(apiKey('bob', 'k9', 'tg-one')), ConflictError);
      assert.equal((await current().accounts.findKey(hashKey('tg-one')))?.user.id, 'alice');
    });

    test('with a most given, a key past that many active keys is a KeyLimitError; revoked and expired keys do not count', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      const later = (ms: number) => new Date(CREATED.getTime() + ms);
      await current().accounts.addKey(apiKey('alice', 'k1'), 2);
      await current().accounts.addKey({ ...apiKey('alice', 'k2'), expires_at: later(HOUR).toISOString() }, 2);
      await assert.rejects(current().accounts.addKey(apiKey('alice', 'k3'), 2), KeyLimitError);
      // Without a most (bootstrap and config-file keys), nothing is counted.
      await current().accounts.addKey(apiKey('alice', 'k3'));
      await current().accounts.revokeKey('alice', 'k1', later(1));
      await current().accounts.revokeKey('alice', 'k3', later(1));
      // Just before CREATED + 1 h, k2 is still active: one more key fits, not two.
      await current().accounts.addKey(apiKey('alice', 'k4', undefined, later(HOUR - 1)), 2);
      await assert.rejects(current().accounts.addKey(apiKey('alice', 'k5', undefined, later(HOUR - 1)), 2), KeyLimitError);
      // At CREATED + 1 h, k2 has expired: room for one again.
      await current().accounts.addKey(apiKey('alice', 'k5', undefined, later(HOUR)), 2);
      await assert.rejects(current().accounts.addKey(apiKey('alice', 'k6', undefined, later(HOUR)), 2), KeyLimitError);
      assert.deepEqual(
        (await current().accounts.listKeys('alice')).map((k) => k.id),
        ['k1', 'k2', 'k3', 'k4', 'k5'],
      );
    });

    test('keys added at once, through two gateways, never pass the most together', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      const other = await peer();
      const attempts = Array.from({ length: 12 }, (_, i) => (i % 2 ? other : current()).accounts.addKey(apiKey('alice', `k${i}`), 5));
      const outcomes = await Promise.allSettled(attempts);
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5);
      assert.ok(outcomes.every((o) => o.status === 'fulfilled' || o.reason instanceof KeyLimitError));
      assert.equal((await current().accounts.listKeys('alice')).length, 5);
    });

    test('findKey finds the key by the hash of its secret, with its user', async () => {
      const user = await current().accounts.createUser(userSpec('alice', { budget: '3' }), CREATED);
      const key = apiKey('alice', 'k1');
      await current().accounts.addKey(key);
      assert.deepEqual(await current().accounts.findKey(key.hash), { key, user });
      assert.equal(await current().accounts.findKey(hashKey('tg-not-a-key')), undefined);
    });

    test('revoking marks the key revoked, once: revoking again keeps the first time', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      const key = apiKey('alice', 'k1');
      await current().accounts.addKey(key);
      const when = new Date(Date.UTC(2026, 1, 1));
      const revoked = await current().accounts.revokeKey('alice', 'k1', when);
      assert.deepEqual(revoked, { ...key, revoked_at: when.toISOString() });
      assert.deepEqual(await current().accounts.revokeKey('alice', 'k1', new Date()), revoked);
      assert.deepEqual(await current().accounts.listKeys('alice'), [revoked]);
      assert.deepEqual((await current().accounts.findKey(key.hash))?.key, revoked);
    });

    test('revoking a key the user does not have is undefined', async () => {
      await current().accounts.createUser(userSpec('alice'), CREATED);
      await current().accounts.createUser(userSpec('bob'), CREATED);
      await current().accounts.addKey(apiKey('bob', 'k1'));
      assert.equal(await current().accounts.revokeKey('alice', 'k1', new Date()), undefined);
      assert.equal(await current().accounts.revokeKey('nobody', 'k1', new Date()), undefined);
      assert.equal((await current().accounts.listKeys('bob'))[0]!.revoked_at, null);
    });
  });
}

function describeCatalog(current: () => Store, peer: () => Promise<Store>): void {
  /** Resolves once a change listener on `store` reads the catalog at `revision` (or later). */
  const seen = (store: Store, revision: number) =>
    new Promise<void>((resolve, reject) => {
      const unsubscribe = store.catalog.onCatalogChange(() => {
        store.catalog.readCatalog().then((catalog) => {
          if (catalog.revision < revision) return;
          unsubscribe();
          resolve();
        }, reject);
      });
    });

  describe('catalog', () => {
    test('a new store has an empty catalog at revision 0', async () => {
      assert.deepEqual(await current().catalog.readCatalog(), { revision: 0, routers: [], providers: [] });
    });

    test('a write at the revision read gives the next revision, and is read back the same', async () => {
      const content = { routers: [router('chat'), router('embed')], providers: [provider('sim-1', 'chat')] };
      assert.equal(await current().catalog.writeCatalog(0, content), 1);
      assert.deepEqual(await current().catalog.readCatalog(), { revision: 1, ...content });
      assert.equal(await current().catalog.writeCatalog(1, { routers: [], providers: [] }), 2);
      assert.deepEqual(await current().catalog.readCatalog(), { revision: 2, routers: [], providers: [] });
    });

    test('a write at a stale revision is a conflict and changes nothing', async () => {
      const content = { routers: [router('chat')], providers: [] };
      await current().catalog.writeCatalog(0, content);
      assert.equal(await current().catalog.writeCatalog(0, { routers: [router('other')], providers: [] }), 'conflict');
      assert.equal(await current().catalog.writeCatalog(7, { routers: [router('other')], providers: [] }), 'conflict');
      assert.deepEqual(await current().catalog.readCatalog(), { revision: 1, ...content });
    });

    test('of two gateways writing at the same revision, exactly one wins', async () => {
      const other = await peer();
      const results = await Promise.all([
        current().catalog.writeCatalog(0, { routers: [router('one')], providers: [] }),
        other.catalog.writeCatalog(0, { routers: [router('two')], providers: [] }),
      ]);
      assert.deepEqual([...results].sort(), [1, 'conflict']);
    });

    test('a change listener hears of a write made through another gateway', async () => {
      const other = await peer();
      const heard = seen(current(), 1);
      await other.catalog.writeCatalog(0, { routers: [router('chat')], providers: [] });
      await heard;
      assert.deepEqual((await current().catalog.readCatalog()).routers, [router('chat')]);
    });

    test('an unsubscribed listener is not called', async () => {
      let calls = 0;
      const unsubscribe = current().catalog.onCatalogChange(() => calls++);
      unsubscribe();
      const heard = seen(current(), 1);
      await current().catalog.writeCatalog(0, { routers: [], providers: [] });
      await heard;
      assert.equal(calls, 0);
    });
  });
}

function describeUsageLog(current: () => Store): void {
  describe('usage log', () => {
    // Within the retention, on whole seconds.
    const base = Math.floor((Date.now() - 2 * HOUR) / 1000) * 1000;
    const appendAll = async (list: UsageRecord[]) => {
      for (const record of list) await current().usage.append(record);
      return list;
    };

    test('records come back newest first, every field as appended', async () => {
      const list = await appendAll([
        usageRecord('alice', base),
        usageRecord('alice', base + 1000, {
          key_id: null,
          provider: null,
          ttft_ms: null,
          incomplete: true,
          status: 429,
          cost_micros: 0n,
          endpoint: 'embeddings',
        }),
        usageRecord('alice', base + 2000, { cost_micros: 123_456_789_012n, kwh: 1.0e-7, kgco2eq: 3.5e-8 }),
      ]);
      const page = await current().usage.query('alice', { limit: 10 });
      assert.deepEqual(page.records, [...list].reverse());
      assert.equal(page.next, null);
    });

    test("a user's query sees only that user's records", async () => {
      await appendAll([usageRecord('alice', base), usageRecord('bob', base + 1000)]);
      assert.deepEqual(
        (await current().usage.query('alice', { limit: 10 })).records.map((r) => r.user_id),
        ['alice'],
      );
      assert.deepEqual(await current().usage.query('carol', { limit: 10 }), { records: [], next: null, totals: EMPTY_TOTALS });
    });

    test('from and to bound the time range, both included', async () => {
      const list = await appendAll([0, 1, 2, 3, 4].map((i) => usageRecord('alice', base + i * 1000)));
      const page = await current().usage.query('alice', { from: base + 1000, to: base + 3000, limit: 10 });
      assert.deepEqual(page.records, [list[3], list[2], list[1]]);
      assert.deepEqual(page.totals, sum(list.slice(1, 4)));
    });

    test('a router filter keeps only that router’s records', async () => {
      const list = await appendAll([
        usageRecord('alice', base, { router: 'chat' }),
        usageRecord('alice', base + 1000, { router: 'embed' }),
        usageRecord('alice', base + 2000, { router: 'chat' }),
      ]);
      const page = await current().usage.query('alice', { router: 'chat', limit: 10 });
      assert.deepEqual(page.records, [list[2], list[0]]);
      assert.deepEqual(page.totals, sum([list[0]!, list[2]!]));
    });

    test('pages continue after the last record seen; totals cover every matching record on every page', async () => {
      const list = await appendAll([0, 1, 2, 3, 4].map((i) => usageRecord('alice', base + i * 1000, { prompt_tokens: i + 1 })));
      const all = sum(list);
      const first = await current().usage.query('alice', { limit: 2 });
      assert.deepEqual(first.records, [list[4], list[3]]);
      assert.deepEqual(first.totals, all);
      assert.notEqual(first.next, null);
      const second = await current().usage.query('alice', { limit: 2, after: first.next! });
      assert.deepEqual(second.records, [list[2], list[1]]);
      assert.deepEqual(second.totals, all);
      const third = await current().usage.query('alice', { limit: 2, after: second.next! });
      assert.deepEqual(third.records, [list[0]]);
      assert.equal(third.next, null);
      assert.deepEqual(third.totals, all);
    });

    test('records of the same millisecond are all kept and paged through', async () => {
      const list = await appendAll([0, 1, 2].map(() => usageRecord('alice', base)));
      const first = await current().usage.query('alice', { limit: 2 });
      const second = await current().usage.query('alice', { limit: 2, after: first.next! });
      assert.deepEqual(new Set([...first.records, ...second.records].map((r) => r.id)), new Set(list.map((r) => r.id)));
      assert.equal(second.next, null);
    });

    test('a record older than the newest one (a slow request, another clock) is still kept', async () => {
      const newer = usageRecord('alice', base + 5000);
      const older = usageRecord('alice', base + 1000);
      await appendAll([newer, older]);
      const page = await current().usage.query('alice', { limit: 10 });
      assert.deepEqual(new Set(page.records.map((r) => r.id)), new Set([newer.id, older.id]));
      assert.deepEqual(page.totals, sum([newer, older]));
    });

    test('records older than the retention are dropped', async () => {
      const recent = usageRecord('alice', base);
      await appendAll([usageRecord('alice', Date.now() - RETENTION_MS - HOUR), recent]);
      const page = await current().usage.query('alice', { limit: 10 });
      assert.deepEqual(page.records, [recent]);
      assert.deepEqual(page.totals, sum([recent]));
    });

    test('a record keeps its real cost apart from what was charged and what was not covered, in records and totals', async () => {
      const now = Date.now();
      const over = usageRecord('alice', now, {
        cost_micros: 5_000n,
        charged_micros: 2_000n,
        uncovered_micros: 3_000n,
        usage_anomaly: 'prompt_over_limit',
      });
      const plain = usageRecord('alice', now + 1, { cost_micros: 700n, charged_micros: 700n });
      await appendAll([over, plain]);
      const page = await current().usage.query('alice', { limit: 10 });
      assert.deepEqual(page.records, [plain, over]);
      assert.equal(page.totals.cost_micros, 5_700n);
      assert.equal(page.totals.uncovered_micros, 3_000n);
      const days = await current().usage.dailyTotals({ user: 'alice' }, day(now), day(now + 1));
      assert.equal(
        Object.values(days).reduce((sum, t) => sum + t.uncovered_micros, 0n),
        3_000n,
      );
      assert.equal(
        Object.values(days).reduce((sum, t) => sum + t.cost_micros, 0n),
        5_700n,
      );
    });

    test('prompt-cache counts are kept in the record, the totals and the daily totals', async () => {
      const now = Date.now();
      await appendAll([
        usageRecord('dora', now, { cached_tokens: 6, cache_write_tokens: 2 }),
        usageRecord('dora', now, { cached_tokens: 3 }),
        usageRecord('dora', now),
      ]);
      const page = await current().usage.query('dora', { limit: 10 });
      assert.deepEqual(page.records.map((r) => [r.cached_tokens, r.cache_write_tokens]).sort(), [
        [0, 0],
        [3, 0],
        [6, 2],
      ]);
      assert.deepEqual([page.totals.cached_tokens, page.totals.cache_write_tokens], [9, 2]);
      const daily = await current().usage.dailyTotals({ user: 'dora' }, day(now), day(now));
      assert.deepEqual([daily[day(now)]?.cached_tokens, daily[day(now)]?.cache_write_tokens], [9, 2]);
    });

    test('daily totals add up each UTC day, per user and per router', async () => {
      const today = Date.now();
      const yesterday = today - DAY;
      await appendAll([
        usageRecord('alice', yesterday, { router: 'chat', cost_micros: 100n }),
        usageRecord('alice', today, { router: 'chat', cost_micros: 200n }),
        usageRecord('alice', today, { router: 'embed', cost_micros: 400n, kwh: 0.125 }),
        usageRecord('bob', today, { router: 'chat', cost_micros: 800n }),
      ]);
      const totals = (requests: number, cost: bigint, kwh: number): UsageTotals => ({
        requests,
        prompt_tokens: 10 * requests,
        completion_tokens: 20 * requests,
        cached_tokens: 0,
        cache_write_tokens: 0,
        cost_micros: cost,
        uncovered_micros: 0n,
        kwh,
        kgco2eq: 0.25 * requests,
      });
      const from = day(today - 3 * DAY);
      assert.deepEqual(await current().usage.dailyTotals({ user: 'alice' }, from, day(today)), {
        [day(yesterday)]: totals(1, 100n, 0.5),
        [day(today)]: totals(2, 600n, 0.625),
      });
      assert.deepEqual(await current().usage.dailyTotals({ router: 'chat' }, from, day(today)), {
        [day(yesterday)]: totals(1, 100n, 0.5),
        [day(today)]: totals(2, 1000n, 1),
      });
      assert.deepEqual(await current().usage.dailyTotals({ user: 'alice' }, day(today), day(today)), {
        [day(today)]: totals(2, 600n, 0.625),
      });
      assert.deepEqual(await current().usage.dailyTotals({ router: 'unused' }, from, day(today)), {});
    });

    test('totals by user and by router over a range of days, for spend reports', async () => {
      const today = Date.now();
      const yesterday = today - DAY;
      await appendAll([
        usageRecord('alice', yesterday, { router: 'chat', cost_micros: 100n }),
        usageRecord('alice', today, { router: 'chat', cost_micros: 200n }),
        usageRecord('alice', today, { router: 'meta-llama/Llama-3.1:8b', cost_micros: 400n }),
        usageRecord('bob', today, { router: 'chat', cost_micros: 800n }),
      ]);
      const costs = (totals: Map<string, UsageTotals>) =>
        Object.fromEntries([...totals].map(([id, t]) => [id, [t.requests, t.cost_micros]]));
      assert.deepEqual(costs(await current().usage.totalsByGroup('user', day(yesterday), day(today))), {
        alice: [3, 700n],
        bob: [1, 800n],
      });
      assert.deepEqual(costs(await current().usage.totalsByGroup('router', day(yesterday), day(today))), {
        chat: [3, 1_100n],
        'meta-llama/Llama-3.1:8b': [1, 400n],
      });
      assert.deepEqual(
        costs(await current().usage.totalsByGroup('user', day(yesterday), day(yesterday))),
        { alice: [1, 100n] },
        'days outside the range are left out',
      );
      assert.deepEqual(costs(await current().usage.totalsByGroup('router', day(today - 9 * DAY), day(today - 8 * DAY))), {});
    });

    test('totals by team, key and provider: a record counts for the team its user was in, its key and its provider', async () => {
      const today = Date.now();
      const yesterday = today - DAY;
      await appendAll([
        usageRecord('alice', yesterday, { team_id: 'red', key_id: 'k-a', provider: 'p-1', cost_micros: 100n }),
        usageRecord('alice', today, { team_id: 'red', key_id: 'k-a', provider: 'p-2', cost_micros: 200n }),
        usageRecord('bob', today, { team_id: 'red', key_id: 'k-b', provider: 'p-1', cost_micros: 400n }),
        usageRecord('carol', today, { team_id: null, key_id: 'k-c', provider: null, cost_micros: 800n }),
      ]);
      const costs = (totals: Map<string, UsageTotals>) =>
        Object.fromEntries([...totals].map(([id, t]) => [id, [t.requests, t.cost_micros]]));
      const range = [day(yesterday), day(today)] as const;
      assert.deepEqual(costs(await current().usage.totalsByGroup('team', ...range)), { red: [3, 700n] });
      assert.deepEqual(costs(await current().usage.totalsByGroup('key', ...range)), {
        'k-a': [2, 300n],
        'k-b': [1, 400n],
        'k-c': [1, 800n],
      });
      assert.deepEqual(costs(await current().usage.totalsByGroup('provider', ...range)), { 'p-1': [2, 500n], 'p-2': [1, 200n] });
      const byDay = await current().usage.dailyByGroup('team', ...range);
      assert.deepEqual(Object.keys(byDay.get('red') ?? {}).sort(), [day(yesterday), day(today)]);
      assert.equal((await current().usage.dailyTotals({ team: 'red' }, day(today), day(today)))[day(today)]?.cost_micros, 600n);
      assert.equal((await current().usage.dailyTotals({ key: 'k-a' }, ...range))[day(yesterday)]?.requests, 1);
    });
  });
}

// Sign-ins under way (begun at /auth/login, not yet back from the identity provider) are bounded
// in all and per client address, in memory and on Redis, on an injected clock: past a bound a new
// one is refused, one taken or ended frees its place. In memory the ended ones are swept from the
// oldest, so a sweep looks at the ended entries and one live one, never the rest (the sweep that
// visited every pending sign-in at each login let 60,000 of them slow every request).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemorySignIns } from '../../../core/store/memory/memory-sign-ins.ts';
import { keys } from '../../../core/store/redis/keys.ts';
import { RedisSignIns } from '../../../core/store/redis/redis-sign-ins.ts';
import type { SessionRecord, SignInStore } from '../../../core/store/sign-ins.ts';
import { useRedis } from '../../support/use-redis.ts';

const redis = useRedis({ emptyBeforeEach: true });
const TTL_MS = 10 * 60_000;
const PENDING = { code_verifier: 'verifier', nonce: 'nonce', return_to: '/playground/' };
const START = Date.UTC(2026, 2, 1);

const stores: Record<string, (now: () => number) => SignInStore> = {
  memory: (now) => new MemorySignIns(now),
  Redis: (now) => new RedisSignIns(redis.admin, now),
};

for (const [kind, make] of Object.entries(stores)) {
  describe(`sign-ins under way (${kind})`, () => {
    test('are bounded in all and per client address; one taken or ended frees its place', async () => {
      let clock = START;
      const store = make(() => clock);
      const limits = { total: 5, perClient: 3 };
      const begin = (state: string, client: string) => store.beginSignIn(state, PENDING, { ttlMs: TTL_MS, client, limits });
      for (const state of ['a1', 'a2', 'a3']) assert.equal(await begin(state, '192.0.2.1'), 'begun', state);
      assert.equal(await begin('a4', '192.0.2.1'), 'too_many_from_client');
      assert.equal(await begin('b1', '192.0.2.2'), 'begun');
      assert.equal(await begin('b2', '192.0.2.2'), 'begun');
      assert.equal(await begin('b3', '192.0.2.2'), 'too_many', 'five under way in all');

      assert.deepEqual(await store.takeSignIn('a1'), PENDING);
      assert.equal(await begin('a5', '192.0.2.1'), 'begun', 'the one taken freed its place, for its client too');
      assert.equal(await begin('c1', '192.0.2.3'), 'too_many');
      assert.equal(await store.takeSignIn('a4'), undefined, 'a refused sign-in is not kept');

      clock += TTL_MS - 1;
      assert.equal(await begin('c2', '192.0.2.3'), 'too_many', 'none has ended yet');
      clock += 1;
      for (const state of ['c3', 'c4', 'c5'])
        assert.equal(await begin(state, '192.0.2.1'), 'begun', `${state}: the ended ones freed their places`);
      assert.equal(await store.takeSignIn('a2'), undefined, 'an ended sign-in is gone');
      assert.deepEqual(await store.takeSignIn('c3'), PENDING);
    });
  });
}

test('on Redis, the counts are sorted sets that hold only live sign-ins and expire', async () => {
  let clock = START;
  const store = new RedisSignIns(redis.admin, () => clock);
  const limits = { total: 100, perClient: 100 };
  for (let i = 0; i < 10; i++) await store.beginSignIn(`s${i}`, PENDING, { ttlMs: TTL_MS, client: '2001:db8::1', limits });
  assert.equal(await redis.admin.zcard(keys.signInsUnderWay), 10);
  clock += TTL_MS;
  await store.beginSignIn('late', PENDING, { ttlMs: TTL_MS, client: '2001:db8::2', limits });
  assert.equal(await redis.admin.zcard(keys.signInsUnderWay), 1, 'the ended ones were dropped');
  const counts = await redis.admin.keys('tg:{sign-ins}:*');
  assert.equal(counts.length, 3, counts.join(', '));
  for (const key of counts) assert.ok((await redis.admin.pttl(key)) > 0, `${key} has no expiry`);
});

test('in memory, a sweep looks at the ended sign-ins and one live one, never the rest', async () => {
  let clock = START;
  const store = new MemorySignIns(() => clock);
  const limits = { total: 10_000, perClient: 10_000 };
  const begin = (state: string) => store.beginSignIn(state, PENDING, { ttlMs: TTL_MS, client: '192.0.2.1', limits });
  for (let i = 0; i < 1000; i++) await begin(`old${i}`);
  clock += 60_000;
  for (let i = 0; i < 1000; i++) await begin(`new${i}`);
  clock = START + TTL_MS; // the first thousand have ended, the second are live

  let before = store.sweepVisits;
  await begin('one');
  assert.equal(store.sweepVisits - before, 1001, 'the thousand ended ones and the first live one');
  assert.equal(store.size, 1001);
  before = store.sweepVisits;
  await begin('two');
  assert.equal(store.sweepVisits - before, 1, 'only the first live one');
});

test('in memory, making a session sweeps the ended sessions only', async () => {
  let clock = START;
  const store = new MemorySignIns(() => clock);
  const session: SessionRecord = { user_id: 'ann', issuer: 'idp', subject: 'ann', created_at: '', expires_at: '' };
  for (let i = 0; i < 1000; i++) await store.createSession(`live${i}`, session, 3_600_000);
  clock += 1;
  const before = store.sweepVisits;
  await store.createSession('one-more', session, 3_600_000);
  assert.equal(store.sweepVisits - before, 1);
  assert.deepEqual(await store.session('live0'), session);
});

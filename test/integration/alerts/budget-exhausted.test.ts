// A hard budget's 100% alert when it runs out. Spending never passes a hard budget and seldom
// lands on it exactly (holds are worst cases: the last requests are refused while some money is
// still left), so a threshold is also raised when the budget runs out: when what is left unspent
// is less than a request needs (its hold at admission, its real cost at settlement). Holds of
// requests in flight do not count: they may yet settle for less. Run on both stores.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import type { Store } from '../../../core/store/store.ts';
import type { AlertConsumer, BudgetAlert } from '../../../core/store/budget-alerts.ts';
import type { OtherLevel } from '../../../core/store/ledger.ts';
import { TeamSpec } from '../../../core/resources/team.ts';
import { useRedis } from '../../support/use-redis.ts';
import { eventually } from '../../support/eventually.ts';
import { userSpec } from '../core/store/contract.ts';

const T0 = Date.UTC(2026, 10, 18, 12, 0, 0);
const HOUR = 3_600_000;
const RETENTION = { usageRetentionMs: 30 * 86_400_000 };

interface Factory {
  make(): Promise<Store>;
}

let holds = 0;
const hold = (micros: bigint) => ({ id: `exhausted-hold-${++holds}`, micros, ttlMs: HOUR });

function describeExhaustion(name: string, factory: Factory): void {
  describe(`${name}: a budget that runs out raises its thresholds up to 100%`, () => {
    let store: Store;
    let received: BudgetAlert[];
    let consumer: AlertConsumer;
    beforeEach(async () => {
      store = await factory.make();
      received = [];
      consumer = store.alerts.consume('test', async (alert) => void received.push(alert), { retryAfterMs: 50 });
      await consumer.ready;
    });
    afterEach(async () => {
      await consumer.stop();
      await store.close();
    });

    const admit = (userId: string, micros: bigint, levels: OtherLevel[] = []) => {
      const h = hold(micros);
      return store.ledger.admit(userId, { now: T0, reservation: h, levels }).then((result) => ({ result, h }));
    };
    const settle = (userId: string, h: ReturnType<typeof hold>, actualMicros: bigint, levels: OtherLevel[] = []) =>
      store.ledger.settle(userId, { now: T0, reservation: h, actualMicros, levels });
    const charge = async (userId: string, micros: bigint, levels: OtherLevel[] = []) => {
      const { result, h } = await admit(userId, micros, levels);
      assert.ok(result.ok, `admitted ${micros}`);
      await settle(userId, h, micros, levels);
    };
    const shown = (alerts: BudgetAlert[]) => alerts.map((a) => [a.level, a.id, a.percent, a.spentMicros, a.exhausted]);
    /** Every alert raised so far: the consumer has caught up once a marker alert raised after them arrives. */
    let markers = 0;
    const settled = async () => {
      const marker = `marker-${++markers}`;
      await store.accounts.createUser(userSpec(marker, { budget: '1', budget_alerts: [1] }), new Date(T0));
      await charge(marker, 1_000_000n);
      await eventually(() => received.some((a) => a.id === marker), 'the marker alert delivered');
      return received.filter((a) => !a.id.startsWith('marker-'));
    };

    test('a hold refused because the rest is too small raises 100%, once, with what was spent', async () => {
      await store.accounts.createUser(userSpec('alice', { budget: '1', budget_alerts: [50, 80, 100] }), new Date(T0));
      await charge('alice', 900_000n);
      const refused = await admit('alice', 200_000n);
      assert.deepEqual(refused.result, { ok: false, reason: 'budget', level: 'user', remainingMicros: 100_000n });
      await admit('alice', 300_000n); // refused again: 100% is not raised twice
      assert.deepEqual(shown(await settled()), [
        ['user', 'alice', 50, 900_000n, false],
        ['user', 'alice', 80, 900_000n, false],
        ['user', 'alice', 100, 900_000n, true],
      ]);
    });

    test('a refusal only because requests in flight hold the rest is not running out', async () => {
      await store.accounts.createUser(userSpec('alice', { budget: '1', budget_alerts: [100] }), new Date(T0));
      const inFlight = await admit('alice', 700_000n);
      assert.ok(inFlight.result.ok);
      const refused = await admit('alice', 400_000n);
      assert.equal(refused.result.ok, false, 'refused: 0.3 left after the hold in flight');
      assert.deepEqual(await settled(), []);
      // The request in flight settles for less; later the rest is really too small.
      await settle('alice', inFlight.h, 650_000n);
      assert.ok((await admit('alice', 300_000n)).result.ok);
      const out = await admit('alice', 400_000n);
      assert.equal(out.result.ok, false);
      assert.deepEqual(shown(await settled()), [['user', 'alice', 100, 650_000n, true]]);
    });

    test('a real cost above what is left, cut to the room, raises the thresholds up to 100% and none above', async () => {
      await store.accounts.createUser(userSpec('alice', { budget: '1', budget_alerts: [50, 100, 150] }), new Date(T0));
      const other = await admit('alice', 300_000n); // in flight: its hold keeps 0.3 of the room
      const { result, h } = await admit('alice', 300_000n);
      assert.ok(other.result.ok && result.ok);
      const settledCharge = await settle('alice', h, 1_200_000n);
      assert.equal(settledCharge.chargedMicros, 700_000n, 'cut to the room left beside the hold in flight');
      assert.deepEqual(shown(await settled()), [
        ['user', 'alice', 50, 700_000n, false],
        ['user', 'alice', 100, 700_000n, true],
      ]);
    });

    test("a team's budget that refuses raises the team's alert, not its member's; a soft budget never runs out", async () => {
      await store.accounts.createTeam(TeamSpec.parse({ id: 'red', name: 'Red', budget: '1', budget_alerts: [100] }), new Date(T0));
      await store.accounts.createUser(
        userSpec('alice', { team: 'red', budget: '10', budget_alerts: [100], soft_budget: true }),
        new Date(T0),
      );
      const levels: OtherLevel[] = [{ level: 'team', id: 'red', policy: undefined }];
      await charge('alice', 950_000n, levels);
      const refused = await admit('alice', 100_000n, levels);
      assert.deepEqual(refused.result, { ok: false, reason: 'budget', level: 'team', remainingMicros: 50_000n });
      assert.deepEqual(
        (await settled()).map((a) => [a.level, a.id, a.user, a.percent, a.exhausted]),
        [['team', 'red', 'alice', 100, true]],
      );
    });
  });
}

describeExhaustion('memory store', { make: async () => new MemoryStore(RETENTION) });

const redis = useRedis();

describeExhaustion('redis store', {
  make: async () => {
    await redis.empty();
    return RedisStore.connect(redis.url, RETENTION);
  },
});

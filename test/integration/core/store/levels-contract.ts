// The ledger's levels: a request of a user in a team, with a key that has a budget of its own, is
// held and charged at the key, the user and the team at once. One suite, run against the
// in-memory store and against Redis (ledger.test.ts).
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../../core/store/store.ts';
import type { Admission, OtherLevel } from '../../../../core/store/ledger.ts';
import type { AlertConsumer, BudgetAlert } from '../../../../core/store/budget-alerts.ts';
import { eventually } from '../../../support/eventually.ts';
import { TeamSpec, type TeamSpecInput } from '../../../../core/resources/team.ts';
import { KeyLimits, type KeyLimitsInput } from '../../../../core/resources/key-limits.ts';
import type { RateLimitPolicy } from '../../../../core/resources/limits.ts';
import { apiKey, userSpec } from './contract.ts';
import type { StoreFactory } from './ledger-contract.ts';

const T0 = Date.UTC(2026, 10, 18, 12, 0, 0); // Wednesday 18 November 2026, 12:00 UTC
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let holds = 0;
const hold = (micros: bigint) => ({ id: `hold-${++holds}`, micros, ttlMs: HOUR });

export function describeLevelsContract(name: string, factory: StoreFactory): void {
  describe(`${name}: the ledger's levels (key, user, team)`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await factory.make();
    });
    afterEach(() => factory.dispose(store));

    const team = (spec: Partial<TeamSpecInput> = {}) =>
      store.accounts.createTeam(TeamSpec.parse({ id: 'red', name: 'Red team', ...spec }), new Date(T0));
    const member = (id: string, spec: Parameters<typeof userSpec>[1] = {}) =>
      store.accounts.createUser(userSpec(id, { team: 'red', ...spec }), new Date(T0));
    const key = async (userId: string, id: string, limits: KeyLimitsInput) => {
      await store.accounts.addKey({ ...apiKey(userId, id), ...KeyLimits.parse(limits) });
    };
    const teamLevel = (policy?: RateLimitPolicy): OtherLevel => ({ level: 'team', id: 'red', policy });
    const keyLevel = (id: string, policy?: RateLimitPolicy): OtherLevel => ({ level: 'key', id, policy });
    // Every user here is a member of team red: its ledger calls name the team, as billing's do.
    const admit = (userId: string, levels: OtherLevel[], fields: Partial<Admission> = {}) =>
      store.ledger.admit(userId, { now: T0, levels, team: 'red', ...fields });

    test('a request is refused by its tightest level, which the refusal names, and a refusal holds nothing anywhere', async () => {
      await team({ budget: '1' });
      await member('alice', { budget: '10' });
      await key('alice', 'app', { budget: '0.5' });
      const levels = [keyLevel('app'), teamLevel()];
      assert.deepEqual(await admit('alice', levels, { reservation: hold(600_000n) }), {
        ok: false,
        reason: 'budget',
        level: 'key',
        remainingMicros: 500_000n,
      });
      assert.deepEqual(await admit('alice', [teamLevel()], { reservation: hold(1_200_000n) }), {
        ok: false,
        reason: 'budget',
        level: 'team',
        remainingMicros: 1_000_000n,
      });
      for (const subject of ['alice', 'team:red', 'key:app'])
        assert.equal((await store.ledger.balance(subject, T0, 'alice')).reservedMicros, 0n, subject);
    });

    test('an admitted request is held at every level, says the tightest one, and its settlement charges each', async () => {
      await team({ budget: '5' });
      await member('alice', { budget: '10' });
      await key('alice', 'app', { budget: '2' });
      const levels = [keyLevel('app'), teamLevel()];
      const h = hold(300_000n);
      assert.deepEqual(await admit('alice', levels, { reservation: h }), {
        ok: true,
        rate: {},
        budget: { level: 'key', remainingMicros: 1_700_000n },
      });
      for (const subject of ['alice', 'team:red', 'key:app'])
        assert.equal((await store.ledger.balance(subject, T0, 'alice')).reservedMicros, 300_000n, subject);
      const settled = await store.ledger.settle('alice', { now: T0, reservation: h, actualMicros: 120_000n, levels, team: 'red' });
      assert.equal(settled.chargedMicros, 120_000n);
      for (const subject of ['alice', 'team:red', 'key:app']) {
        const balance = await store.ledger.balance(subject, T0, 'alice');
        assert.equal(balance.spentMicros, 120_000n, subject);
        assert.equal(balance.reservedMicros, 0n, subject);
      }
      assert.equal((await store.ledger.balance('team:red', T0)).budgetMicros, 5_000_000n);
    });

    test("many users of one team at the team's edge, at once: the team serves exactly what it covers and is never overspent", async () => {
      await team({ budget: '1' }); // ten requests of 0.1
      const users = ['alice', 'bob', 'carol'];
      for (const id of users) await member(id);
      const admissions = Array.from({ length: 30 }, (_, i) => ({ user: users[i % 3]!, reservation: hold(100_000n) }));
      const results = await Promise.all(admissions.map((a) => admit(a.user, [teamLevel()], { reservation: a.reservation })));
      const admitted = admissions.filter((_, i) => results[i]!.ok);
      assert.equal(admitted.length, 10);
      for (const result of results.filter((r) => !r.ok)) assert.ok(!result.ok && result.reason === 'budget' && result.level === 'team');
      // Each costs more than its hold: the team's room caps what is charged.
      const settled = await Promise.all(
        admitted.map((a) =>
          store.ledger.settle(a.user, { now: T0, reservation: a.reservation, actualMicros: 150_000n, levels: [teamLevel()], team: 'red' }),
        ),
      );
      const charged = settled.reduce((sum, s) => sum + s.chargedMicros, 0n);
      assert.equal(charged, 1_000_000n);
      assert.equal((await store.ledger.balance('team:red', T0)).spentMicros, 1_000_000n);
    });

    test('rate limits count at each level: the team limit refuses a second user, and names the team', async () => {
      await team();
      await member('alice');
      await member('bob');
      const rate = { scope: 'chat', policy: undefined, tokens: 0 };
      const levels = [teamLevel({ requests_per_minute: 2 })];
      assert.equal((await admit('alice', levels, { rate })).ok, true);
      assert.equal((await admit('bob', levels, { rate })).ok, true);
      const refused = await admit('bob', levels, { rate, now: T0 + 1 });
      assert.ok(!refused.ok && refused.reason === 'rate');
      assert.equal(refused.level, 'team');
      assert.equal(refused.limit, 'requests_per_minute');
      assert.equal(refused.rate.requests_per_minute?.remaining, 0);
    });

    test("a key's rate limit is the key's own: another key of the same user is not counted in it", async () => {
      await team();
      await member('alice');
      await key('alice', 'one', { rate_limits: { requests_per_minute: 1 } });
      await key('alice', 'two', { rate_limits: { requests_per_minute: 1 } });
      const rate = { scope: 'chat', policy: undefined, tokens: 0 };
      assert.equal((await admit('alice', [keyLevel('one', { requests_per_minute: 1 })], { rate })).ok, true);
      const refused = await admit('alice', [keyLevel('one', { requests_per_minute: 1 })], { rate });
      assert.ok(!refused.ok && refused.reason === 'rate' && refused.level === 'key');
      assert.equal((await admit('alice', [keyLevel('two', { requests_per_minute: 1 })], { rate })).ok, true);
    });

    test("each level's period starts again on its own boundary", async () => {
      await team({ budget: '1', budget_period: 'daily' });
      await member('alice', { budget: '1', budget_period: 'weekly' });
      const levels = [teamLevel()];
      const first = hold(800_000n);
      assert.ok((await admit('alice', levels, { reservation: first })).ok);
      await store.ledger.settle('alice', { now: T0, reservation: first, actualMicros: 800_000n, levels, team: 'red' });
      // Thursday: the team's day is new, the user's week is not.
      const refused = await admit('alice', levels, { now: T0 + DAY, reservation: hold(300_000n) });
      assert.ok(!refused.ok && refused.reason === 'budget');
      assert.equal(refused.level, 'user');
      assert.equal(refused.remainingMicros, 200_000n);
      assert.equal((await store.ledger.balance('team:red', T0 + DAY)).spentMicros, 0n);
      // The next Monday both are new.
      assert.ok((await admit('alice', levels, { now: T0 + 5 * DAY, reservation: hold(900_000n) })).ok);
    });

    test('a raised team budget applies to the next request; a deleted team no longer counts', async () => {
      await team({ budget: '0.1' });
      await member('alice');
      const levels = [teamLevel()];
      assert.equal((await admit('alice', levels, { reservation: hold(200_000n) })).ok, false);
      await store.accounts.updateTeam(TeamSpec.parse({ id: 'red', name: 'Red team', budget: '1' }));
      assert.equal((await admit('alice', levels, { reservation: hold(200_000n) })).ok, true);
      await store.accounts.deleteTeam('red');
      assert.equal((await admit('alice', levels, { reservation: hold(5_000_000n) })).ok, true);
    });
  });
}

export function describeAlertsContract(name: string, factory: StoreFactory): void {
  describe(`${name}: budget alerts`, () => {
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
      await factory.dispose(store);
    });

    const charge = async (userId: string, micros: bigint, now = T0, levels: OtherLevel[] = []) => {
      const h = hold(micros);
      // The members of team red are charged with it, as billing names a user's team.
      const team = levels.some((l) => l.level === 'team') ? 'red' : undefined;
      const admitted = await store.ledger.admit(userId, { now, reservation: h, levels, team });
      assert.ok(
        admitted.ok,
        JSON.stringify(admitted, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
      );
      await store.ledger.settle(userId, { now, reservation: h, actualMicros: micros, levels, team });
    };

    test('each threshold is raised once per period, by the settlement that reaches it, even from settlements at once', async () => {
      await store.accounts.createUser(
        userSpec('alice', { budget: '1', budget_period: 'daily', budget_alerts: [80, 50, 100] }),
        new Date(T0),
      );
      await charge('alice', 400_000n);
      assert.equal(received.length, 0);
      // Two settlements at once: the first reaches 50% and raises it, the second does not again.
      await Promise.all([charge('alice', 100_000n), charge('alice', 100_000n)]);
      await charge('alice', 250_000n); // 85%
      await charge('alice', 150_000n); // 100%
      await eventually(() => received.length >= 3, 'three alerts delivered');
      assert.deepEqual(
        received.map((a) => [a.level, a.id, a.percent, a.spentMicros]),
        [
          ['user', 'alice', 50, 500_000n],
          ['user', 'alice', 80, 850_000n],
          ['user', 'alice', 100, 1_000_000n],
        ],
      );
      assert.equal(received[0]!.key, `user:alice:${received[0]!.period}:50`);
      assert.equal(received[0]!.budgetMicros, 1_000_000n);
      // The next day: the period starts again, and so do its alerts.
      await charge('alice', 500_000n, T0 + DAY);
      await eventually(() => received.length >= 4, 'the next period raised 50% again');
      assert.equal(received[3]!.percent, 50);
      assert.notEqual(received[3]!.period, received[0]!.period);
    });

    test("a team's threshold is raised by whichever member reaches it; a soft budget alerts and never refuses", async () => {
      await store.accounts.createTeam(
        TeamSpec.parse({ id: 'red', name: 'Red', budget: '1', budget_alerts: [100], soft_budget: true }),
        new Date(T0),
      );
      for (const id of ['alice', 'bob']) await store.accounts.createUser(userSpec(id, { team: 'red' }), new Date(T0));
      const levels: OtherLevel[] = [{ level: 'team', id: 'red', policy: undefined }];
      await charge('alice', 600_000n, T0, levels);
      await charge('bob', 600_000n, T0, levels); // past the soft budget: admitted, and charged whole
      await charge('alice', 600_000n, T0, levels);
      await eventually(() => received.length >= 1, 'the team alert delivered');
      assert.deepEqual(
        received.map((a) => [a.level, a.id, a.user, a.percent]),
        [['team', 'red', 'bob', 100]],
      );
      assert.equal((await store.ledger.balance('team:red', T0)).spentMicros, 1_800_000n);
    });

    test('a failed delivery is offered again until it succeeds', async () => {
      await consumer.stop();
      let failures = 0;
      consumer = store.alerts.consume(
        'flaky',
        async (alert) => {
          if (failures++ < 2) throw new Error('receiver down');
          received.push(alert);
        },
        { retryAfterMs: 50 },
      );
      await consumer.ready;
      await store.accounts.createUser(userSpec('alice', { budget: '1', budget_alerts: [50] }), new Date(T0));
      await charge('alice', 600_000n);
      await eventually(() => received.length >= 1, 'delivered after two failures');
      assert.equal(failures, 3);
      assert.equal(received.length, 1);
    });
  });
}

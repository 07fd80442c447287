// The ledger's contract: what admission and settlement do to a user's money and limits. One
// suite, run against the in-memory store and against Redis (ledger.test.ts), so both behave
// the same to the micro-unit and to the millisecond.
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../../../core/store/store.ts';
import type { UserSpecInput } from '../../../../core/resources/user.ts';
import { UserSpec } from '../../../../core/resources/user.ts';
import type { RateLimitPolicy } from '../../../../core/resources/limits.ts';

/** A fresh, empty store for each test, and a way to dispose of it. */
export interface StoreFactory {
  make(): Promise<Store>;
  dispose(store: Store): Promise<void>;
}

const T0 = Date.UTC(2026, 10, 18, 12, 0, 0); // Wednesday 18 November 2026, 12:00 UTC
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const M = 1_000_000n; // one money unit in micro-units

let holds = 0;
const hold = (micros: bigint, ttlMs = HOUR) => ({ id: `hold-${++holds}`, micros, ttlMs });

export function describeLedgerContract(name: string, factory: StoreFactory): void {
  describe(`${name}: the ledger`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await factory.make();
    });
    afterEach(() => factory.dispose(store));

    const user = async (spec: Partial<UserSpecInput> = {}) => {
      const record = await store.accounts.createUser(UserSpec.parse({ id: 'alice', name: 'Alice', ...spec }), new Date(T0));
      return record.id;
    };

    describe('budgets', () => {
      test('a hold that fits is admitted, and one that does not is refused with what remains', async () => {
        const id = await user({ budget: '1' });
        assert.deepEqual(await store.ledger.admit(id, { now: T0, reservation: hold(600_000n) }), {
          ok: true,
          rate: {},
          budget: { level: 'user', remainingMicros: 400_000n },
        });
        assert.deepEqual(await store.ledger.admit(id, { now: T0, reservation: hold(400_001n) }), {
          ok: false,
          reason: 'budget',
          level: 'user',
          remainingMicros: 400_000n,
        });
        assert.deepEqual(await store.ledger.admit(id, { now: T0, reservation: hold(400_000n) }), {
          ok: true,
          rate: {},
          budget: { level: 'user', remainingMicros: 0n },
        });
      });

      test('a refusal changes nothing', async () => {
        const id = await user({ budget: '0.5' });
        await store.ledger.admit(id, { now: T0, reservation: hold(5_000_000n) });
        const balance = await store.ledger.balance(id, T0);
        assert.equal(balance.reservedMicros, 0n);
        assert.equal(balance.spentMicros, 0n);
      });

      test('settling charges the real cost and releases the rest of the hold', async () => {
        const id = await user({ budget: '1' });
        const h = hold(500_000n);
        await store.ledger.admit(id, { now: T0, reservation: h });
        assert.deepEqual(await store.ledger.settle(id, { now: T0, reservation: h, actualMicros: 123_456n }), { chargedMicros: 123_456n });
        const balance = await store.ledger.balance(id, T0);
        assert.equal(balance.spentMicros, 123_456n);
        assert.equal(balance.reservedMicros, 0n);
        assert.equal(balance.budgetMicros, M);
      });

      test('settling at 0 releases the whole hold (failed or refused upstream)', async () => {
        const id = await user({ budget: '1' });
        const h = hold(M);
        await store.ledger.admit(id, { now: T0, reservation: h });
        assert.deepEqual(await store.ledger.settle(id, { now: T0, reservation: h, actualMicros: 0n }), { chargedMicros: 0n });
        assert.deepEqual(await store.ledger.admit(id, { now: T0, reservation: hold(M) }), {
          ok: true,
          rate: {},
          budget: { level: 'user', remainingMicros: 0n },
        });
      });

      test('a real cost above the hold is charged while the budget has room', async () => {
        const id = await user({ budget: '1' });
        const h = hold(100_000n);
        await store.ledger.admit(id, { now: T0, reservation: h });
        assert.deepEqual(await store.ledger.settle(id, { now: T0, reservation: h, actualMicros: 150_000n }), { chargedMicros: 150_000n });
      });

      test('the spent total never passes the budget: a charge is capped at the room left', async () => {
        const id = await user({ budget: '1' });
        const a = hold(600_000n);
        const b = hold(400_000n);
        await store.ledger.admit(id, { now: T0, reservation: a });
        await store.ledger.admit(id, { now: T0, reservation: b });
        // a costs more than it held: only what b's hold leaves free can be charged.
        assert.deepEqual(await store.ledger.settle(id, { now: T0, reservation: a, actualMicros: 900_000n }), { chargedMicros: 600_000n });
        assert.deepEqual(await store.ledger.settle(id, { now: T0, reservation: b, actualMicros: 400_000n }), { chargedMicros: 400_000n });
        assert.equal((await store.ledger.balance(id, T0)).spentMicros, M);
      });

      test('a hold never settled (a crashed gateway) expires and is released', async () => {
        const id = await user({ budget: '1' });
        await store.ledger.admit(id, { now: T0, reservation: hold(M, 60_000) });
        assert.equal((await store.ledger.admit(id, { now: T0 + 59_999, reservation: hold(1n) })).ok, false);
        assert.equal((await store.ledger.balance(id, T0 + 60_000)).reservedMicros, 0n);
        assert.deepEqual(await store.ledger.admit(id, { now: T0 + 60_000, reservation: hold(M) }), {
          ok: true,
          rate: {},
          budget: { level: 'user', remainingMicros: 0n },
        });
      });

      test('settling after the hold expired still charges, within the room left', async () => {
        const id = await user({ budget: '1' });
        const h = hold(300_000n, 1000);
        await store.ledger.admit(id, { now: T0, reservation: h });
        await store.ledger.admit(id, { now: T0 + 2000, reservation: hold(800_000n) });
        assert.deepEqual(await store.ledger.settle(id, { now: T0 + 3000, reservation: h, actualMicros: 300_000n }), {
          chargedMicros: 200_000n,
        });
      });

      test('an unlimited user is always admitted and their spending is still kept', async () => {
        const id = await user({ budget: null });
        const h = hold(10n ** 15n);
        assert.deepEqual(await store.ledger.admit(id, { now: T0, reservation: h }), { ok: true, rate: {} });
        await store.ledger.settle(id, { now: T0, reservation: h, actualMicros: 2_500_000n });
        await store.ledger.settle(id, { now: T0, actualMicros: 500_000n });
        const balance = await store.ledger.balance(id, T0);
        assert.equal(balance.budgetMicros, null);
        assert.equal(balance.spentMicros, 3_000_000n);
      });

      test('a raised budget applies to the next admission', async () => {
        const id = await user({ budget: '0' });
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(1n) })).ok, false);
        await store.accounts.updateUser(UserSpec.parse({ id, name: 'Alice', budget: '0.000001' }));
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(1n) })).ok, true);
      });

      test('an unknown user is refused as such', async () => {
        assert.deepEqual(await store.ledger.admit('nobody', { now: T0, reservation: hold(1n) }), { ok: false, reason: 'unknown_user' });
      });

      test('many concurrent admissions never hold more than the budget', async () => {
        const id = await user({ budget: '0.5' });
        const results = await Promise.all(
          Array.from({ length: 200 }, () => store.ledger.admit(id, { now: T0, reservation: hold(10_000n) })),
        );
        assert.equal(results.filter((r) => r.ok).length, 50);
        assert.equal((await store.ledger.balance(id, T0)).reservedMicros, 500_000n);
      });
    });

    describe('budget periods (UTC calendar)', () => {
      const spend = async (id: string, now: number, micros: bigint) => {
        const h = hold(micros);
        assert.equal((await store.ledger.admit(id, { now, reservation: h })).ok, true);
        await store.ledger.settle(id, { now, reservation: h, actualMicros: micros });
      };

      test('a daily budget starts again at midnight UTC, and each day is kept in the history', async () => {
        const id = await user({ budget: '1', budget_period: 'daily' });
        await spend(id, T0, M);
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(1n) })).ok, false);
        const midnight = Date.UTC(2026, 10, 19);
        assert.equal((await store.ledger.admit(id, { now: midnight - 1, reservation: hold(1n) })).ok, false);
        await spend(id, midnight, 250_000n);
        const balance = await store.ledger.balance(id, midnight + HOUR);
        assert.equal(balance.spentMicros, 250_000n);
        assert.deepEqual(balance.periodStart, new Date(midnight));
        assert.deepEqual(balance.periodEnd, new Date(midnight + DAY));
        assert.deepEqual(balance.history, { '2026-11-18': M, '2026-11-19': 250_000n });
      });

      test('a weekly budget starts again on Monday', async () => {
        const id = await user({ budget: '1', budget_period: 'weekly' });
        await spend(id, T0, M); // Wednesday
        const monday = Date.UTC(2026, 10, 23);
        assert.equal((await store.ledger.admit(id, { now: monday - 1, reservation: hold(1n) })).ok, false);
        assert.equal((await store.ledger.admit(id, { now: monday, reservation: hold(1n) })).ok, true);
        assert.deepEqual((await store.ledger.balance(id, monday)).periodStart, new Date(monday));
      });

      test('a monthly budget starts again on the 1st', async () => {
        const id = await user({ budget: '1', budget_period: 'monthly' });
        await spend(id, T0, M);
        const december = Date.UTC(2026, 11, 1);
        assert.equal((await store.ledger.admit(id, { now: december - 1, reservation: hold(1n) })).ok, false);
        assert.equal((await store.ledger.admit(id, { now: december, reservation: hold(1n) })).ok, true);
        const balance = await store.ledger.balance(id, december);
        assert.deepEqual([balance.periodStart, balance.periodEnd], [new Date(december), new Date(Date.UTC(2027, 0, 1))]);
      });

      test('a clock behind the last period seen does not bring the old period back', async () => {
        const id = await user({ budget: '1', budget_period: 'daily' });
        const tomorrow = T0 + DAY;
        await spend(id, tomorrow, M);
        // Another gateway whose clock is a day late must not reset to (or charge) the old day.
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(1n) })).ok, false);
      });

      test('balance reports a period that ended since the last request as unspent', async () => {
        const id = await user({ budget: '1', budget_period: 'daily' });
        await spend(id, T0, 300_000n);
        assert.equal((await store.ledger.balance(id, T0 + DAY)).spentMicros, 0n);
      });
    });

    describe('rate limits (sliding window)', () => {
      const rate = (policy: RateLimitPolicy, tokens = 0, scope = 'chat') => ({ scope, policy, tokens });

      test('requests per minute: the limit is admitted, the next is refused with when to retry', async () => {
        const id = await user();
        const policy = { requests_per_minute: 3 };
        for (let i = 0; i < 3; i++) assert.equal((await store.ledger.admit(id, { now: T0 + i, rate: rate(policy) })).ok, true);
        const refused = await store.ledger.admit(id, { now: T0 + 10, rate: rate(policy) });
        assert.equal(refused.ok, false);
        assert.ok(!refused.ok && refused.reason === 'rate');
        assert.equal(refused.limit, 'requests_per_minute');
        // The window started at T0 (a whole minute): room comes back when the next one starts,
        // as the previous minute's weight then decays.
        assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 120_000, `retry after ${refused.retryAfterMs}`);
        assert.deepEqual(refused.rate.requests_per_minute, { limit: 3, remaining: 0, resetMs: 120_000 - 10 });
      });

      test('the statuses of an admitted request say what remains', async () => {
        const id = await user();
        const result = await store.ledger.admit(id, { now: T0, rate: rate({ requests_per_minute: 10, tokens_per_day: 1000 }, 120) });
        assert.deepEqual(result, {
          ok: true,
          rate: {
            requests_per_minute: { limit: 10, remaining: 9, resetMs: 120_000 },
            tokens_per_day: { limit: 1000, remaining: 880, resetMs: 2 * DAY - 12 * HOUR },
          },
        });
      });

      test('the window slides: the previous minute counts by how much of it still overlaps', async () => {
        const id = await user();
        const policy = { requests_per_minute: 4 };
        for (let i = 0; i < 4; i++) await store.ledger.admit(id, { now: T0, rate: rate(policy) });
        // Half-way through the next minute, the full previous minute weighs 4 * 0.5 = 2.
        const half = T0 + 90_000;
        assert.equal((await store.ledger.admit(id, { now: half, rate: rate(policy) })).ok, true);
        assert.equal((await store.ledger.admit(id, { now: half, rate: rate(policy) })).ok, true);
        assert.equal((await store.ledger.admit(id, { now: half, rate: rate(policy) })).ok, false);
        // Two minutes later everything has slid out.
        assert.equal((await store.ledger.admit(id, { now: T0 + 240_000, rate: rate(policy) })).ok, true);
      });

      test('the retry time it gives is when the request would pass', async () => {
        const id = await user();
        const policy = { requests_per_minute: 2 };
        await store.ledger.admit(id, { now: T0, rate: rate(policy) });
        await store.ledger.admit(id, { now: T0, rate: rate(policy) });
        const refused = await store.ledger.admit(id, { now: T0 + 30_000, rate: rate(policy) });
        assert.ok(!refused.ok && refused.reason === 'rate');
        const retryAt = T0 + 30_000 + refused.retryAfterMs;
        assert.equal((await store.ledger.admit(id, { now: retryAt - 1, rate: rate(policy) })).ok, false);
        assert.equal((await store.ledger.admit(id, { now: retryAt, rate: rate(policy) })).ok, true);
      });

      test('tokens per minute take the prompt at admission and the completion at settlement', async () => {
        const id = await user();
        const policy = { tokens_per_minute: 1000 };
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 300) })).ok, true);
        await store.ledger.settle(id, { now: T0, actualMicros: 0n, rate: rate(policy, 600) });
        const refused = await store.ledger.admit(id, { now: T0, rate: rate(policy, 101) });
        assert.ok(!refused.ok && refused.reason === 'rate' && refused.limit === 'tokens_per_minute');
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 100) })).ok, true);
      });

      test('a request bigger than a whole window is refused for a full window', async () => {
        const id = await user();
        const refused = await store.ledger.admit(id, { now: T0, rate: rate({ tokens_per_minute: 100 }, 101) });
        assert.ok(!refused.ok && refused.reason === 'rate');
        assert.equal(refused.retryAfterMs, 60_000);
      });

      test('limits are counted per router', async () => {
        const id = await user();
        const policy = { requests_per_minute: 1 };
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 0, 'a') })).ok, true);
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 0, 'b') })).ok, true);
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 0, 'a') })).ok, false);
      });

      test('a rate refusal holds no money, and a budget refusal takes no rate share', async () => {
        const id = await user({ budget: '1' });
        const policy = { requests_per_minute: 1 };
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(2n * M), rate: rate(policy) })).ok, false);
        assert.equal((await store.ledger.admit(id, { now: T0, reservation: hold(M), rate: rate(policy) })).ok, true);
        const refused = await store.ledger.admit(id, { now: T0, reservation: hold(1n), rate: rate(policy) });
        assert.ok(!refused.ok && refused.reason === 'rate');
        assert.equal((await store.ledger.balance(id, T0)).reservedMicros, M);
      });
    });

    // Requests of one turn of the event loop reach Redis as one batch, which reads each hash once
    // and writes it once: each request must still see what the ones before it changed.
    describe('many requests of one user at once', () => {
      const rate = (policy: RateLimitPolicy, tokens = 0, scope = 'chat') => ({ scope, policy, tokens });

      test('a request limit admits exactly the limit, and each admitted request sees one fewer remaining', async () => {
        const id = await user();
        const policy = { requests_per_minute: 4 };
        const results = await Promise.all(Array.from({ length: 10 }, () => store.ledger.admit(id, { now: T0, rate: rate(policy) })));
        const admitted = results.filter((r) => r.ok);
        assert.equal(admitted.length, 4);
        assert.deepEqual(admitted.map((r) => r.rate.requests_per_minute!.remaining).sort(), [0, 1, 2, 3]);
        assert.equal((await store.ledger.admit(id, { now: T0 + 1, rate: rate(policy) })).ok, false, 'the four were written');
      });

      test('settlements together charge the sum, record it in the history and release every hold', async () => {
        const id = await user({ budget: '1', budget_period: 'daily' });
        const taken = Array.from({ length: 8 }, () => hold(100_000n));
        const admitted = await Promise.all(taken.map((h) => store.ledger.admit(id, { now: T0, reservation: h })));
        assert.ok(admitted.every((r) => r.ok));
        const charged = await Promise.all(
          taken.map((h, i) => store.ledger.settle(id, { now: T0, reservation: h, actualMicros: BigInt(10_000 * (i + 1)) })),
        );
        assert.deepEqual(
          charged.map((c) => c.chargedMicros),
          taken.map((_, i) => BigInt(10_000 * (i + 1))),
        );
        const balance = await store.ledger.balance(id, T0);
        assert.equal(balance.spentMicros, 360_000n);
        assert.equal(balance.reservedMicros, 0n);
        assert.deepEqual(balance.history, { '2026-11-18': 360_000n });
      });

      test('settlements together never charge past the budget: the room left is shared in order', async () => {
        const id = await user({ budget: '0.25' });
        const charged = await Promise.all(Array.from({ length: 3 }, () => store.ledger.settle(id, { now: T0, actualMicros: 100_000n })));
        assert.deepEqual(
          charged.map((c) => c.chargedMicros),
          [100_000n, 100_000n, 50_000n],
        );
        assert.equal((await store.ledger.balance(id, T0)).spentMicros, 250_000n);
      });

      test('a daily budget rolls over between two requests of one turn, and the late clock does not bring it back', async () => {
        const id = await user({ budget: '1', budget_period: 'daily' });
        const midnight = Date.UTC(2026, 10, 19);
        const [before, after, late] = await Promise.all([
          store.ledger.settle(id, { now: midnight - 1, actualMicros: 700_000n }),
          store.ledger.settle(id, { now: midnight, actualMicros: 200_000n }),
          store.ledger.settle(id, { now: midnight - 2, actualMicros: 300_000n }),
        ]);
        assert.deepEqual([before.chargedMicros, after.chargedMicros, late.chargedMicros], [700_000n, 200_000n, 300_000n]);
        const balance = await store.ledger.balance(id, midnight);
        assert.equal(balance.spentMicros, 500_000n, 'the new day counts the request at midnight and the late one');
        assert.deepEqual(balance.history, { '2026-11-18': 700_000n, '2026-11-19': 500_000n });
      });

      test('tokens settled together all count in the window', async () => {
        const id = await user();
        const policy = { tokens_per_minute: 1000 };
        await Promise.all(Array.from({ length: 5 }, () => store.ledger.settle(id, { now: T0, actualMicros: 0n, rate: rate(policy, 150) })));
        const refused = await store.ledger.admit(id, { now: T0, rate: rate(policy, 251) });
        assert.ok(!refused.ok && refused.reason === 'rate' && refused.limit === 'tokens_per_minute');
        assert.equal((await store.ledger.admit(id, { now: T0, rate: rate(policy, 250) })).ok, true);
      });

      test('settlements and admissions of one turn apply in the order they were made', async () => {
        const id = await user({ budget: '0.3' });
        const first = hold(200_000n);
        assert.ok((await store.ledger.admit(id, { now: T0, reservation: first })).ok);
        // Made before the settlement, the admission finds the first hold still there; made
        // after it, the room the settlement gave back.
        const early = hold(200_000n);
        const late = hold(200_000n);
        const [refused, settled, admitted] = await Promise.all([
          store.ledger.admit(id, { now: T0, reservation: early }),
          store.ledger.settle(id, { now: T0, reservation: first, actualMicros: 50_000n }),
          store.ledger.admit(id, { now: T0, reservation: late }),
        ]);
        assert.ok(!refused.ok && refused.reason === 'budget' && refused.remainingMicros === 100_000n);
        assert.equal(settled.chargedMicros, 50_000n);
        assert.equal(admitted.ok, true);
        const balance = await store.ledger.balance(id, T0);
        assert.equal(balance.spentMicros, 50_000n);
        assert.equal(balance.reservedMicros, 200_000n);
      });
    });
  });
}

// Steady load on gateways while their Redis fails over (Sentinel, or a Redis Cluster's primary),
// and what the failover tests assert of it: every request answered, 200, 503 with Retry-After, or
// 402 past a budget, none hung; and the money: with the failover loss bound, spent equals served
// exactly; without it, what is lost stays within what ended from shortly before the primary died
// until the gateways reached the new one (docs/redis.md).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { eventually } from './eventually.ts';
import { CONVERGE_MS } from './patience.ts';

export type LoadUser = 'alice' | 'bob';

/** The request's deadline: an answer must come within the gateway's own timeouts. */
export const REQUEST_DEADLINE_MS = 30_000;
/** How long before the primary's death a write may not have reached a replica, at most (docs/redis.md). */
export const REPLICATION_WINDOW_MS = 1000;

export const micros = (dollars: number) => Math.round(dollars * 1e6);

export interface Answer {
  /** Which gateway answered (its index), for which router and user. */
  readonly gateway: number;
  readonly model: string;
  readonly user: LoadUser;
  readonly status: number | 'hung';
  readonly retryAfter: string | null;
  /** The cost the caller was told, in micros. */
  readonly micros: number;
  /** When the answer came (ms). */
  readonly at: number;
}

export interface FailoverLoad {
  readonly answers: readonly Answer[];
  /** Ends the load and waits for its last requests. */
  stop(): Promise<void>;
  /** What was served to `user` (micros), of answers that came between `from` and `to`. */
  served(user: LoadUser, from?: number, to?: number): number;
  /** Waits until each gateway has served Alice on every router since answer `since`. */
  servingAgain(since: number, what: string): Promise<void>;
}

/**
 * Each gateway in a loop, one request at a time: Alice's, and every third Bob's (until his budget
 * runs out), over `models` in turn. The load ends with `t` however the test ends.
 */
export function startFailoverLoad(
  t: TestContext,
  gateways: readonly { readonly url: string }[],
  keys: Record<LoadUser, string>,
  models: readonly string[],
): FailoverLoad {
  const answers: Answer[] = [];
  let loading = true;
  const chat = async (url: string, gateway: number, user: LoadUser, model: string): Promise<Answer> => {
    try {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[user]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
        signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
      });
      const body = (await response.json()) as { usage?: { cost: number } };
      const cost = response.status === 200 ? micros(body.usage?.cost ?? 0) : 0;
      const retryAfter = response.headers.get('retry-after');
      return { gateway, user, model, status: response.status, retryAfter, micros: cost, at: Date.now() };
    } catch {
      return { gateway, user, model, status: 'hung', retryAfter: null, micros: 0, at: Date.now() };
    }
  };
  const running = gateways.map(async (gw, gateway) => {
    for (let i = 0; loading; i++) answers.push(await chat(gw.url, gateway, i % 3 === 2 ? 'bob' : 'alice', models[i % models.length]!));
  });
  const stop = async () => {
    loading = false;
    await Promise.all(running);
  };
  // A failed assertion ends the load too (else it would go on against closed gateways).
  t.after(stop);
  return {
    answers,
    stop,
    served: (user, from = 0, to = Number.POSITIVE_INFINITY) =>
      answers.filter((a) => a.user === user && a.at >= from && a.at <= to).reduce((sum, a) => sum + a.micros, 0),
    async servingAgain(since, what) {
      const served = (i: number, model: string) =>
        answers.slice(since).some((a) => a.gateway === i && a.model === model && a.user === 'alice' && a.status === 200);
      await eventually(() => gateways.every((_, i) => models.every((model) => served(i, model))), what, { timeoutMs: CONVERGE_MS });
    },
  };
}

/** Every answer 200, 503 with Retry-After, or 402 (Bob past his budget): none hung. */
export function assertAnswered(answers: readonly Answer[]): void {
  assert.deepEqual(
    [...new Set(answers.map((a) => a.status))].filter((s) => s !== 200 && s !== 503 && s !== 402),
    [],
    'every request answered 200 or 503 (or 402, Bob past his budget)',
  );
  for (const answer of answers.filter((a) => a.status === 503)) assert.ok(answer.retryAfter !== null, 'a 503 says when to come back');
}

export interface Failover {
  readonly bound: boolean;
  /** What each user was charged since the load began (micros). */
  charged(user: LoadUser): Promise<number>;
  /** When the primary was killed, and when every gateway served again (ms). */
  readonly killedAt: number;
  readonly recoveredAt: number;
}

/**
 * With the loss bound, each user was charged exactly what was served; without it, never more, and
 * what was lost is at most what ended in the failover's window (with the numbers as diagnostics).
 */
export async function assertChargedAsServed(t: TestContext, load: FailoverLoad, failover: Failover): Promise<void> {
  for (const user of ['alice', 'bob'] as const) {
    const charged = await failover.charged(user);
    if (failover.bound) {
      assert.equal(charged, load.served(user), `${user}'s spending equals what was served`);
      continue;
    }
    const lost = load.served(user) - charged;
    const window = load.served(user, failover.killedAt - REPLICATION_WINDOW_MS, failover.recoveredAt);
    t.diagnostic(
      `${user}: served ${load.served(user)} micros, lost ${lost} (${((100 * lost) / Math.max(1, load.served(user))).toFixed(1)}%), at most ${window} ended in the window of ${failover.recoveredAt - failover.killedAt + REPLICATION_WINDOW_MS} ms`,
    );
    assert.ok(lost >= 0, `${user} charged no more than served`);
    assert.ok(lost <= window, `${user}'s loss (${lost}) within what ended in the failover's window (${window})`);
  }
}

// The bound on users made for tokens and sign-ins (gateway/identity/new-users.ts), on a clock the
// test moves: per issuer, a burst of the minute's share, then that pace, with how long to wait.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../../gateway/api/api-error.ts';
import { parseIdentityConfig } from '../../../gateway/identity/identity-config.ts';
import { NewUsers } from '../../../gateway/identity/new-users.ts';

/** What taking a new user of `issuer` gives: 'made', or the refusal's Retry-After (seconds). */
function take(bound: NewUsers, issuer = 'idp'): 'made' | number {
  try {
    bound.take(issuer);
    return 'made';
  } catch (error) {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 429);
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.match(error.message, new RegExp(`came with ${issuer} in the last minute \\(at most \\d+ a minute\\)`));
    return Number(error.headers?.['retry-after']);
  }
}

describe('the bound on new users', () => {
  test("an issuer makes a minute's share at once, then one each 60/share seconds; the refusal says when to come back", () => {
    let now = 1_000_000;
    const bound = new NewUsers(3, () => now);
    assert.deepEqual([take(bound), take(bound), take(bound)], ['made', 'made', 'made']);
    assert.equal(take(bound), 20);
    now += 15_000;
    assert.equal(take(bound), 5);
    now += 5_000;
    assert.equal(take(bound), 'made');
    assert.equal(take(bound), 20);
    now += 10 * 60_000; // a long quiet spell refills no more than the share
    assert.deepEqual([take(bound), take(bound), take(bound), take(bound)], ['made', 'made', 'made', 20]);
  });

  test("one issuer's flood leaves another's newcomers their share; a clock going back gives nothing", () => {
    let now = 5_000_000;
    const bound = new NewUsers(1, () => now);
    assert.deepEqual([take(bound, 'k8s'), take(bound, 'k8s')], ['made', 60]);
    assert.equal(take(bound, 'okta'), 'made');
    now -= 120_000;
    assert.equal(take(bound, 'k8s'), 60);
  });

  test('an identity file without max_new_users_per_minute bounds them at 60 a minute; one past 100,000 is refused', () => {
    const issuers = [{ name: 'idp', issuer: 'https://idp.example', audiences: ['tollgate'] }];
    assert.equal(parseIdentityConfig('identity.yaml', JSON.stringify({ issuers })).max_new_users_per_minute, 60);
    assert.throws(
      () => parseIdentityConfig('identity.yaml', JSON.stringify({ issuers, max_new_users_per_minute: 1_000_000 })),
      /max_new_users_per_minute/,
    );
  });
});

// A provider's circuit breaker: closed, open on failures in a row or on a failure rate over its
// window, half-open after the cool-down (a few probes go), closed on the first answer, open again
// on a failed probe. The clock is the test's: times are passed in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CircuitBreaker, type BreakerPolicy } from '../../../gateway/routing/circuit-breaker.ts';

const POLICY: BreakerPolicy = { threshold: 3, cooldownMs: 30_000, windowMs: 60_000, failureRate: 0.5, minRequests: 10, halfOpenProbes: 1 };

describe('the circuit breaker', () => {
  test('opens after `threshold` failures in a row, and lets nothing through while open', () => {
    const breaker = new CircuitBreaker();
    assert.equal(breaker.recordFailure(1_000, POLICY, 'down'), undefined);
    assert.equal(breaker.recordFailure(1_001, POLICY, 'down'), undefined);
    assert.equal(breaker.recordFailure(1_002, POLICY, 'down'), 31_002, 'the third opens it for the cool-down');
    assert.equal(breaker.state(1_003), 'open');
    assert.equal(breaker.allows(31_001, POLICY), false);
    assert.equal(breaker.reason, 'down');
  });

  test('an answer between failures resets the run: alternate failures never open it by the count alone', () => {
    const breaker = new CircuitBreaker();
    const noRate = { ...POLICY, minRequests: 1_000 };
    for (let i = 0; i < 8; i++) {
      assert.equal(breaker.recordFailure(i * 10, noRate, 'flaky'), undefined);
      breaker.recordSuccess(i * 10 + 5, noRate);
    }
    assert.equal(breaker.state(100), 'closed', 'never 3 failures in a row');
  });

  test('opens on a failure rate over the window once it holds enough requests', () => {
    const breaker = new CircuitBreaker();
    // 9 requests, 4 failed, none 3 in a row: not yet (fewer than minRequests).
    const outcomes = [true, false, true, false, true, false, true, false, false];
    outcomes.forEach((failed, i) => {
      if (failed) assert.equal(breaker.recordFailure(i, POLICY, 'flaky'), undefined);
      else breaker.recordSuccess(i, POLICY);
    });
    // The 10th request fails: 5 of 10 failed, the rate (0.5) is reached.
    assert.equal(breaker.recordFailure(9, POLICY, 'flaky'), 30_009);
  });

  test('failures older than the window do not count toward the rate', () => {
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 4; i++) {
      breaker.recordFailure(i * 2, POLICY, 'old');
      breaker.recordSuccess(i * 2 + 1, POLICY);
    }
    // A minute and more later: the old requests have left the window.
    const later = 120_000;
    for (let i = 0; i < 9; i++) breaker.recordSuccess(later + i, POLICY);
    assert.equal(breaker.recordFailure(later + 10, POLICY, 'new'), undefined, '1 failure in 10 requests');
  });

  test('half-opens after the cool-down: one probe goes, its answer closes the breaker', () => {
    const breaker = new CircuitBreaker();
    breaker.openFor(10_000, 'down');
    assert.equal(breaker.state(10_000), 'half_open');
    assert.equal(breaker.allows(10_000, POLICY), true);
    assert.equal(breaker.placed(10_000), true, 'counted as the probe');
    assert.equal(breaker.allows(10_001, POLICY), false, 'one probe at a time');
    assert.equal(breaker.recordSuccess(10_050, POLICY), true, 'closed by the answer');
    breaker.probeDone();
    assert.equal(breaker.state(10_051), 'closed');
    assert.equal(breaker.allows(10_051, POLICY), true);
  });

  test('a failed probe opens it again for another cool-down', () => {
    const breaker = new CircuitBreaker();
    breaker.openFor(10_000, 'down');
    breaker.placed(10_000);
    assert.equal(breaker.recordFailure(10_020, POLICY, 'still down'), 40_020);
    assert.equal(breaker.state(10_021), 'open');
    assert.equal(breaker.reason, 'still down');
  });

  test("another gateway's opening is taken when it lasts longer, and its closing closes this one", () => {
    const breaker = new CircuitBreaker();
    breaker.openFor(50_000, 'seen by another gateway');
    breaker.openFor(20_000, 'shorter');
    assert.equal(breaker.openUntil, 50_000);
    assert.equal(breaker.reason, 'seen by another gateway');
    breaker.closeShared();
    assert.equal(breaker.state(0), 'closed');
  });
});

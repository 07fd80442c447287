// How long a body may take to arrive (gateway/http/body-deadlines.ts), on a clock and timers the
// test moves: a body that stops sending is let go after the idle bound, one that trickles after
// the total bound, one that keeps coming or ends in time never.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyDeadlines, type BodyExpiry } from '../../../gateway/http/body-deadlines.ts';
import { ManualTimers } from '../../support/manual-timers.ts';

function setup(totalMs = 10_000, idleMs = 2_000) {
  const timers = new ManualTimers();
  let now = 0;
  const deadlines = new BodyDeadlines({ totalMs, idleMs }, { timers, now: () => now });
  const expired: [BodyExpiry, number][] = [];
  /** Moves the clock on by `ms`, firing the sweep at each step it asked for. */
  const pass = (ms: number) => {
    const until = now + ms;
    while (timers.pending > 0 && now + timers.delays.at(-1)! <= until) {
      now += timers.delays.at(-1)!;
      timers.fireAll();
    }
    now = until;
  };
  const watch = () => deadlines.watch((why, ms) => expired.push([why, ms]));
  return { timers, deadlines, expired, pass, watch };
}

describe('body deadlines', () => {
  test('a body that sends nothing for the idle bound expires as idle, once', () => {
    const { expired, pass, watch } = setup();
    const body = watch();
    body.received(100);
    pass(1_900);
    assert.deepEqual(expired, []);
    pass(2_600);
    assert.deepEqual(expired, [['idle', 2_000]]);
    pass(20_000);
    assert.equal(expired.length, 1);
  });

  test('a body that keeps trickling expires at the total bound', () => {
    const { expired, pass, watch } = setup();
    const body = watch();
    for (let t = 0; t < 9_500; t += 500) {
      body.received(1);
      pass(500);
    }
    assert.deepEqual(expired, []);
    body.received(1);
    pass(1_000);
    assert.deepEqual(expired, [['total', 10_000]]);
  });

  test('a body read in time is no longer watched, and the sweep stops with nothing to watch', () => {
    const { timers, expired, pass, watch } = setup();
    const body = watch();
    body.received(10);
    body.stop();
    pass(60_000);
    assert.deepEqual(expired, []);
    assert.equal(timers.pending, 0);
  });

  test('closed: nothing is swept any more', () => {
    const { timers, deadlines, watch } = setup();
    watch();
    deadlines.close();
    assert.equal(timers.pending, 0);
  });
});

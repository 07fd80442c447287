// Repeated log lines collapse to one per kind per interval, plus one counting those left out,
// on an injected clock and timer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogThrottle } from '../../../gateway/observability/log-throttle.ts';

function setup() {
  let now = 0;
  const timers: { at: number; run: () => void; cancelled: boolean }[] = [];
  const lines: { level: string; details: object; message: string }[] = [];
  const log = {
    warn: (details: object, message: string) => lines.push({ level: 'warn', details, message }),
    error: (details: object, message: string) => lines.push({ level: 'error', details, message }),
  };
  const throttle = new LogThrottle({
    intervalMs: 10_000,
    now: () => now,
    schedule: (run, ms) => {
      const timer = { at: now + ms, run, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
  });
  /** Moves the clock, running the timers that fall due. */
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.splice(0)) {
      if (timer.cancelled) continue;
      if (timer.at <= now) timer.run();
      else timers.push(timer);
    }
  };
  return { throttle, log, lines, advance };
}

test('100 refusals during an outage write the first line and one that counts the rest', () => {
  const { throttle, log, lines, advance } = setup();
  const kinds = throttle.kindLog(log);
  for (let i = 0; i < 100; i++) {
    throttle.write('store unavailable', 'warn', log, { code: 'store_unavailable' }, 'Budgets cannot be checked right now');
    kinds.error('usage not recorded', `could not record usage of user u${i}: the store (Redis) is unavailable`);
    advance(50);
  }
  assert.deepEqual(
    lines.map((l) => l.message),
    ['Budgets cannot be checked right now', 'could not record usage of user u0: the store (Redis) is unavailable'],
  );
  advance(10_000);
  assert.equal(lines.length, 4);
  assert.deepEqual(
    lines.slice(2).map((l) => [l.level, l.details, l.message]),
    [
      ['warn', { kind: 'store unavailable', repeated: 99 }, '99 more like this in the last 10 s: Budgets cannot be checked right now'],
      [
        'error',
        { kind: 'usage not recorded', repeated: 99 },
        '99 more like this in the last 10 s: could not record usage of user u0: the store (Redis) is unavailable',
      ],
    ],
  );
});

test('a line after the interval goes through again; a single line needs no count', () => {
  const { throttle, log, lines, advance } = setup();
  throttle.write('settle failed', 'error', log, {}, 'first');
  advance(10_000);
  throttle.write('settle failed', 'error', log, {}, 'second');
  advance(30_000);
  assert.deepEqual(
    lines.map((l) => l.message),
    ['first', 'second'],
  );
});

test('close() writes the counts not written yet', () => {
  const { throttle, log, lines } = setup();
  for (let i = 0; i < 3; i++) throttle.write('fail open', 'warn', log, {}, 'serving without accounting');
  throttle.close();
  assert.deepEqual(
    lines.map((l) => l.message),
    ['serving without accounting', '2 more like this in the last 10 s: serving without accounting'],
  );
});

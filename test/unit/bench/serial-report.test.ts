// The concurrency-one benchmark's verdicts (bench/serial-report.ts): added latency is taken within
// a round against the upstream called directly, and issue 29's goals are judged on the rounds'
// medians; a goal must not be called met on a meaningless figure (a multiple of a baseline that
// added nothing).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ContenderId } from '../../../bench/report.ts';
import { added, serialBeforeAfterLines, serialGoalLines, serialSection, type SerialMeasurement } from '../../../bench/serial-report.ts';

const quiet = { serverPercent: 50, otherPercent: 0, stealPercent: 0 };

/** One window of `contender` in `round` with the given p50 and p99 in µs. */
function window(round: number, contender: ContenderId, p50Us: number, p99Us: number): SerialMeasurement {
  return {
    round,
    contender,
    label: contender,
    result: { requests: 2000, errors: 0, p50Us, p99Us, maxUs: p99Us, meanUs: p50Us, seconds: 1 },
    problem: undefined,
    cpu: quiet,
    disturbed: false,
  };
}

/** Three rounds; in each the floor adds 200/1,000 µs and the gateway `p50`/`p99` µs over direct. */
function run(gatewayP50: number, gatewayP99: number, contender: ContenderId = 'gateway-redis'): SerialMeasurement[] {
  return [1, 2, 3].flatMap((round) => {
    const direct = 50 + round; // the host drifts between rounds; added figures must not
    return [
      window(round, 'direct', direct, 10 * direct),
      window(round, 'node', direct + 200, 10 * direct + 1000),
      window(round, contender, direct + gatewayP50, 10 * direct + gatewayP99),
    ];
  });
}

test('added latency is the contender minus the upstream called directly in the same round', () => {
  assert.deepEqual(added(run(300, 1500), 'gateway-redis'), [
    { round: 1, p50Us: 300, p99Us: 1500 },
    { round: 2, p50Us: 300, p99Us: 1500 },
    { round: 3, p50Us: 300, p99Us: 1500 },
  ]);
});

test('all features on Redis meet the goals at 0.15 ms above the floor p50 and twice its p99', () => {
  const [p50, p99] = serialGoalLines(run(350, 2000), false);
  assert.match(p50!, /\+0\.150 ms above it \(goal ≤ \+0\.15 ms above: met, in 3 of 3 rounds;/);
  assert.match(p99!, /2\.00× it \(goal ≤ 2×: met, in 3 of 3 rounds;/);
});

test('a microsecond past either goal is not met', () => {
  const [p50, p99] = serialGoalLines(run(351, 2001), false);
  assert.match(p50!, /goal ≤ \+0\.15 ms above: not met, in 0 of 3 rounds/);
  assert.match(p99!, /goal ≤ 2×: not met, in 0 of 3 rounds/);
});

test('when the floor adds nothing at p99 there is no multiple, and the goal is not called met', () => {
  const measurements = run(300, 100).map((m) => (m.contender === 'node' ? window(m.round, 'node', m.result.p50Us, 0) : m));
  const [, p99] = serialGoalLines(measurements, false);
  assert.match(p99!, /no multiple, the proxy adds nothing at p99 \(goal ≤ 2×: not met, in 0 of 3 rounds;.*n\/a · n\/a · n\/a\)/);
});

test('the pass-through gets the same figures without a goal, and a disturbed window marks the verdict', () => {
  const measurements = run(250, 1200, 'gateway-plain');
  assert.match(serialGoalLines(measurements, false)[0]!, /gateway-plain, added p50 \+0\.250 ms .*\(no goal; /);
  const disturbed = run(300, 1500).map((m) => (m.contender === 'direct' && m.round === 2 ? { ...m, disturbed: true } : m));
  assert.match(serialGoalLines(disturbed, false)[0]!, /unreliable: a window it uses was disturbed †/);
  assert.match(serialSection({ heading: 'h', facts: [] }, disturbed), /\| direct † \| 0\.052 \|/);
});

test('before/after is called lower only when every round agrees', () => {
  const after = run(300, 1500);
  const before = run(400, 1500, 'gateway-redis-before').filter((m) => m.contender === 'gateway-redis-before');
  const [line] = serialBeforeAfterLines([...after, ...before], false);
  assert.match(line!, /added p50 −0\.100 ms against before \(lower in every round; rounds: −0\.100 · −0\.100 · −0\.100\)/);
  assert.match(line!, /added p99 \+0\.000 ms against before \(within the rounds' spread;/);
});

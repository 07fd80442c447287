// The status of routers and providers after a routing reconcile: the conditions computeRouting
// gives, Programmed from the gateways' reports, counts and the public name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { condition } from '../../../operator/reconcile/conditions.ts';
import { programmedCondition, providerStatus, routerStatus, type GatewayReport } from '../../../operator/reconcile/routing-status.ts';

const NOW = new Date('2026-11-10T12:00:00Z');
const EARLIER = '2026-11-01T00:00:00.000Z';

describe('programmedCondition', () => {
  const cases: [string, GatewayReport[] | undefined, string, string, RegExp][] = [
    ['Redis cannot be read', undefined, 'Unknown', 'ReportsUnavailable', /cannot be read/],
    ['no gateway reports', [], 'Unknown', 'NoGateways', /No gateway/],
    [
      'every gateway serves the version',
      [
        { pod: 'a', version: 'v2' },
        { pod: 'b', version: 'v2' },
      ],
      'True',
      'Programmed',
      /Every gateway \(2\) serves routing snapshot v2/,
    ],
    [
      'one gateway lags',
      [
        { pod: 'a', version: 'v2' },
        { pod: 'b', version: 'v1' },
      ],
      'False',
      'Pending',
      /1 of 2 gateways serve routing snapshot v2/,
    ],
  ];
  for (const [name, reports, status, reason, message] of cases) {
    test(name, () => {
      const programmed = programmedCondition(reports, 'v2');
      assert.deepEqual([programmed.type, programmed.status, programmed.reason], ['Programmed', status, reason]);
      assert.match(programmed.message, message);
    });
  }
});

describe('routerStatus', () => {
  const programmed = condition('Programmed', true, 'Programmed', 'all');

  test('an accepted router: its conditions and Programmed at its generation, counts and public name', () => {
    const outcome = {
      conditions: [condition('Accepted', true, 'Accepted', 'ok'), condition('Ready', true, 'Ready', '2 of 2')],
      publicName: 'chat',
      providers: { ready: 2, total: 2 },
    };
    const status = routerStatus({ metadata: { generation: 3 } }, outcome, programmed, NOW);
    assert.deepEqual(
      status.conditions.map((c) => [c.type, c.status, c.observedGeneration]),
      [
        ['Accepted', 'True', 3],
        ['Ready', 'True', 3],
        ['Programmed', 'True', 3],
      ],
    );
    assert.deepEqual([status.observedGeneration, status.publicName, status.providers], [3, 'chat', { ready: 2, total: 2 }]);
  });

  test('a refused router: no Programmed, and a public name left from before is removed', () => {
    const outcome = {
      conditions: [condition('Accepted', false, 'InvalidSpec', 'bad'), condition('Ready', false, 'InvalidSpec', 'not served')],
      publicName: undefined,
      providers: { ready: 0, total: 1 },
    };
    const status = routerStatus({ metadata: { generation: 2 } }, outcome, programmed, NOW);
    assert.deepEqual(
      status.conditions.map((c) => c.type),
      ['Accepted', 'Ready'],
    );
    assert.equal(status.publicName, null);
  });

  test('a condition whose status did not change keeps its transition time; one that changed gets now', () => {
    const current = {
      conditions: [
        {
          type: 'Accepted',
          status: 'True' as const,
          reason: 'Accepted',
          message: 'ok',
          observedGeneration: 1,
          lastTransitionTime: EARLIER,
        },
        {
          type: 'Ready',
          status: 'False' as const,
          reason: 'NoReadyProviders',
          message: 'none',
          observedGeneration: 1,
          lastTransitionTime: EARLIER,
        },
      ],
    };
    const outcome = {
      conditions: [condition('Accepted', true, 'Accepted', 'ok'), condition('Ready', true, 'Ready', '1 of 1')],
      publicName: 'chat',
      providers: { ready: 1, total: 1 },
    };
    const status = routerStatus({ metadata: { generation: 2 }, status: current }, outcome, programmed, NOW);
    assert.deepEqual(
      status.conditions.map((c) => c.lastTransitionTime),
      [EARLIER, NOW.toISOString(), NOW.toISOString()],
    );
  });
});

test("providerStatus: the desired conditions at the provider's generation", () => {
  const status = providerStatus({ metadata: { generation: 5 } }, [condition('Accepted', true, 'Accepted', 'ok')], NOW);
  assert.deepEqual([status.observedGeneration, status.conditions[0]?.observedGeneration], [5, 5]);
});

// When a status write is needed, and which condition changes become Events. A status equal to
// the current one in everything a reader cares about is never written again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Condition } from '../../../core/resources/kubernetes/crd-schemas.ts';
import { notableTransitions, statusChanged } from '../../../operator/reconcile/status.ts';

const at = (type: string, status: 'True' | 'False' | 'Unknown', reason = type, extra: Partial<Condition> = {}): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  observedGeneration: 1,
  lastTransitionTime: '2026-11-01T00:00:00Z',
  ...extra,
});

describe('statusChanged', () => {
  const current = {
    observedGeneration: 1,
    conditions: [at('Accepted', 'True'), at('Ready', 'True')],
    providers: { ready: 2, total: 2 },
    publicName: 'chat',
  };
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['the same status', {}, false],
    [
      'only a later lastTransitionTime',
      { conditions: [at('Accepted', 'True', 'Accepted', { lastTransitionTime: '2026-12-01T00:00:00Z' }), at('Ready', 'True')] },
      false,
    ],
    ['a new generation observed', { observedGeneration: 2 }, true],
    [
      'a condition observed at a new generation',
      { conditions: [at('Accepted', 'True', 'Accepted', { observedGeneration: 2 }), at('Ready', 'True')] },
      true,
    ],
    ["a condition's message", { conditions: [at('Accepted', 'True'), { ...at('Ready', 'True'), message: '1 of 2' }] }, true],
    ['a condition more', { conditions: [at('Accepted', 'True'), at('Ready', 'True'), at('Programmed', 'Unknown')] }, true],
    ['counts', { providers: { total: 3, ready: 2 } }, true],
    ['counts in another key order', { providers: { total: 2, ready: 2 } }, false],
    ['a field removed (null)', { publicName: null }, true],
  ];
  for (const [name, change, changed] of cases) {
    test(`${name}: ${changed ? 'written' : 'not written'}`, () => {
      assert.equal(statusChanged(current, { ...current, ...change } as never), changed);
    });
  }

  test('removing a field that is already absent is no change; no status at all always is one', () => {
    assert.equal(statusChanged({ conditions: [at('Ready', 'True')] }, { conditions: [at('Ready', 'True')], remaining: null }), false);
    assert.equal(statusChanged(undefined, { conditions: [at('Ready', 'True')] }), true);
  });
});

describe('notableTransitions', () => {
  const cases: [string, Condition[] | undefined, Condition[], string[]][] = [
    ['first status, ready', undefined, [at('Accepted', 'True'), at('Ready', 'True')], ['Normal Ready']],
    [
      'first status, invalid',
      undefined,
      [at('Accepted', 'False', 'InvalidSpec'), at('Ready', 'False', 'InvalidSpec')],
      ['Warning InvalidSpec', 'Warning InvalidSpec'],
    ],
    ['nothing changed', [at('Accepted', 'True'), at('Ready', 'True')], [at('Accepted', 'True'), at('Ready', 'True')], []],
    [
      'still invalid, for another reason',
      [at('Accepted', 'False', 'InvalidSpec'), at('Ready', 'False', 'InvalidSpec')],
      [at('Accepted', 'False', 'NameConflict'), at('Ready', 'False', 'NameConflict')],
      [],
    ],
    [
      'Ready lost',
      [at('Accepted', 'True'), at('Ready', 'True')],
      [at('Accepted', 'True'), at('Ready', 'False', 'NoReadyProviders')],
      ['Warning NoReadyProviders'],
    ],
    ['Ready regained', [at('Ready', 'False', 'NoReadyProviders')], [at('Ready', 'True')], ['Normal Ready']],
    ['Programmed changes are not events', [at('Programmed', 'Unknown')], [at('Programmed', 'True')], []],
  ];
  for (const [name, previous, next, expected] of cases) {
    test(name, () => {
      assert.deepEqual(
        notableTransitions(previous, next).map((note) => `${note.type} ${note.reason}`),
        expected,
      );
    });
  }
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomId } from '../../../core/ids.ts';

describe('randomId', () => {
  test('gives 128 random bits as 32 lowercase hex characters', () => {
    assert.match(randomId(), /^[0-9a-f]{32}$/);
  });

  test('never repeats, across many refills of its pool', () => {
    const ids = Array.from({ length: 10_000 }, randomId);
    assert.equal(new Set(ids).size, ids.length);
  });
});

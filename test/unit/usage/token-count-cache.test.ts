// Long texts are counted once and remembered, within a bound on the text kept; short ones are
// always counted (the lookup would cost as much).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TokenCountCache } from '../../../gateway/usage/token-count-cache.ts';
import { countTextTokens } from '../../../gateway/usage/tokens.ts';

/** A counter that says how often it was asked. */
function counter() {
  const calls: string[] = [];
  return { calls, count: (text: string) => (calls.push(text), text.length) };
}

const long = (letter: string) => letter.repeat(2000);

describe('TokenCountCache', () => {
  test('a long text is counted once; the same text again (a new string) comes from the cache', () => {
    const cache = new TokenCountCache(10_000);
    const { calls, count } = counter();
    assert.equal(cache.count(long('a'), count), 2000);
    assert.equal(cache.count('a'.repeat(1000) + 'a'.repeat(1000), count), 2000);
    assert.equal(calls.length, 1);
  });

  test('short texts are counted every time and not kept', () => {
    const cache = new TokenCountCache(10_000);
    const { calls, count } = counter();
    cache.count('hello', count);
    cache.count('hello', count);
    assert.equal(calls.length, 2);
    assert.equal(cache.size, 0);
  });

  test('past its bound it forgets the least recently used texts first', () => {
    const cache = new TokenCountCache(5000); // room for two texts of 2000
    const { calls, count } = counter();
    cache.count(long('a'), count);
    cache.count(long('b'), count);
    cache.count(long('a'), count); // a is now the most recent
    cache.count(long('c'), count); // evicts b
    assert.equal(cache.size, 2);
    calls.length = 0;
    cache.count(long('a'), count);
    cache.count(long('c'), count);
    assert.deepEqual(calls, []);
    cache.count(long('b'), count);
    assert.deepEqual(calls, [long('b')]);
  });

  test('a text longer than the whole bound is counted and not kept', () => {
    const cache = new TokenCountCache(1500);
    const { calls, count } = counter();
    cache.count(long('a'), count);
    cache.count(long('a'), count);
    assert.equal(calls.length, 2);
    assert.equal(cache.size, 0);
  });
});

test('the gateway counts a long history the same from the cache as the first time', () => {
  const history = 'The gateway routes requests to providers and charges every request. '.repeat(100);
  const first = countTextTokens(history);
  assert.ok(first > 500);
  assert.equal(countTextTokens(JSON.parse(JSON.stringify(history)) as string), first);
});

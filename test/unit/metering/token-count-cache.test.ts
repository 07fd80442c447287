// Texts are counted once and remembered, within a bound on the text kept (each entry charged 32
// characters beyond its text) and on the number of texts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TokenCountCache } from '../../../gateway/metering/token-count-cache.ts';
import { countTextTokens } from '../../../gateway/metering/tokens.ts';

/** A counter that says how often it was asked. */
function counter() {
  const calls: string[] = [];
  return {
    calls,
    count: (text: string) => {
      calls.push(text);
      return text.length;
    },
  };
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

  test('a short text is remembered too: a system prompt repeats on every request', () => {
    const cache = new TokenCountCache(10_000);
    const { calls, count } = counter();
    assert.equal(cache.count('You are a helpful assistant.', count), 28);
    assert.equal(cache.count(JSON.parse('"You are a helpful assistant."') as string, count), 28);
    assert.deepEqual(calls, ['You are a helpful assistant.']);
    assert.equal(cache.size, 1);
  });

  test('many tiny texts are bounded by the cost of their entries, not only by their length', () => {
    const cache = new TokenCountCache(340); // 340 characters: ten entries of two or three
    const { count } = counter();
    for (let i = 0; i < 100; i++) cache.count(`t${i}`, count);
    assert.ok(cache.size <= 10, `kept ${cache.size}`);
    assert.equal(
      cache.count('t99', () => assert.fail('the newest text was forgotten')),
      3,
    );
  });

  test('past its bound it forgets the least recently used texts first', () => {
    const cache = new TokenCountCache(5000); // room for two texts of 2000 (and their entries)
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

  test('past its number of entries it forgets the least recently used, whatever their length', () => {
    const cache = new TokenCountCache(1_000_000, 3);
    const { calls, count } = counter();
    for (const text of ['a', 'b', 'c']) cache.count(text, count);
    cache.get('a'); // a is now the most recent: b is the oldest
    cache.count('d', count);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('b'), undefined);
    for (const text of ['a', 'c', 'd']) assert.equal(cache.get(text), 1, text);
    assert.deepEqual(calls, ['a', 'b', 'c', 'd']);
  });

  test('many texts coming and going: it keeps exactly the most recent ones, in order', () => {
    const cache = new TokenCountCache(1_000_000, 100);
    const { count } = counter();
    for (let i = 0; i < 10_000; i++) {
      cache.count(`text ${i}`, count);
      if (i % 7 === 0) cache.get(`text ${i - 50}`); // hits in the middle move entries to the end
    }
    assert.equal(cache.size, 100);
    // Eviction follows recency: the next 100 new texts push out every one kept, oldest first.
    const kept = Array.from({ length: 10_000 }, (_, i) => `text ${i}`).filter((text) => cache.get(text) !== undefined);
    assert.equal(kept.length, 100);
    for (let i = 0; i < 100; i++) cache.count(`new ${i}`, count);
    assert.deepEqual(
      kept.filter((text) => cache.get(text) !== undefined),
      [],
    );
    assert.equal(cache.size, 100);
  });

  test('a text longer than the whole bound is counted and not kept', () => {
    const cache = new TokenCountCache(2000); // 2000 characters and an entry's cost do not fit
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

// The O(n log n) merge gives exactly the tokens of gpt-tokenizer's own O(n²) merge: checked
// against an untouched copy of the library's o200k encoding on texts with long runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countWithin } from '../../../gateway/metering/o200k.ts';

// A second o200k encoding, not the gateway's (whose merge o200k.ts replaces): the reference.
const reference = GptEncoding.getEncodingApi('o200k_base', () => bpeRanks);
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Deterministic pseudo-random texts: runs of one alphabet, up to `max` characters long. */
function texts(seed: number, count: number, max: number): string[] {
  const alphabets = ['c', 'ab', 'aeiourstln', 'ABCdef', '我们的网关请求路由', 'éèêàç', 'абвгд', '🙂😀a', '0123456789abcdef', '=-+', ' \n'];
  let x = seed;
  const next = (m: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % m;
  };
  return Array.from({ length: count }, () => {
    const alphabet = [...alphabets[next(alphabets.length)]!];
    let text = '';
    for (let i = 1 + next(max); i > 0; i--) text += alphabet[next(alphabet.length)];
    return text;
  });
}

test('long runs are counted exactly as the library counts them', () => {
  for (const text of texts(7, 400, 600)) {
    const counted = countWithin(text, Infinity);
    assert.ok(counted, 'counted without a bound on lookups');
    assert.equal(counted.tokens, reference.countTokens(text, PLAIN_TEXT), JSON.stringify(text.slice(0, 40)));
  }
});

test('a run of 20,000 letters: the same tokens, with a few rank lookups per byte', () => {
  const text = 'c'.repeat(20_000);
  const counted = countWithin(text, Infinity)!;
  assert.equal(counted.tokens, reference.countTokens(text, PLAIN_TEXT));
  assert.equal(counted.tokens, 5_000);
  assert.ok(counted.lookups <= 4 * text.length, `${counted.lookups} lookups`);
});

test('a count that needs more lookups than allowed stops and says so', () => {
  // (A text not counted before: the library remembers the tokens of the chunks it merged.)
  assert.equal(countWithin('d'.repeat(20_000), 1_000), undefined);
  // Counting goes on as before after a count was stopped.
  assert.equal(countWithin('c'.repeat(1_000), Infinity)?.tokens, 250);
});

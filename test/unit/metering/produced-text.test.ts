// The text a stream produced is kept only as far as counting reads it: past EXACT_CHARS the pieces
// are dropped and only their bytes added up, so a stream's memory does not grow with its answer,
// and the count is the one the whole text would get (exact, or its UTF-8 bytes past the bound).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProducedText } from '../../../gateway/metering/produced-text.ts';
import { countTextTokens, EXACT_CHARS } from '../../../gateway/metering/tokens.ts';

describe('ProducedText', () => {
  test('a short answer is counted exactly, as its whole text would be', () => {
    const produced = new ProducedText();
    const pieces = ['Hello', ' there', ', how', ' are', ' you', '?'];
    for (const piece of pieces) produced.add(piece);
    assert.equal(produced.tokens(), countTextTokens(pieces.join('')));
    assert.equal(produced.keptChars, pieces.join('').length);
  });

  test('past EXACT_CHARS nothing more is kept, and the count is the bytes of the whole text', () => {
    const produced = new ProducedText();
    // 64 KiB pieces with multi-byte characters, 3 MiB of text in all.
    const piece = 'naïve café ☕ '.repeat(4096);
    const pieces = Array.from({ length: Math.ceil((3 * EXACT_CHARS) / piece.length) }, () => piece);
    let most = 0;
    for (const text of pieces) {
      produced.add(text);
      most = Math.max(most, produced.keptChars);
    }
    assert.ok(most <= EXACT_CHARS + piece.length, `kept ${most} characters`);
    assert.equal(produced.keptChars, 0, 'nothing kept once past the bound');
    const whole = pieces.join('');
    assert.equal(produced.tokens(), countTextTokens(whole));
    assert.equal(produced.tokens(), Buffer.byteLength(whole, 'utf8'));
  });

  test('a text just under the bound is still counted exactly', () => {
    const produced = new ProducedText();
    const half = 'word '.repeat(50_000);
    produced.add(half);
    produced.add(half);
    assert.equal(produced.tokens(), countTextTokens(half + half));
    assert.ok(produced.tokens() < Buffer.byteLength(half + half), 'counted, not bounded by bytes');
  });
});

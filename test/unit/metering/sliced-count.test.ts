// Counting a long prompt a slice at a time (tokens.ts countInSlices, issue 46 finding 15) gives the
// count of counting it in one go: texts are cut only where o200k's pattern splits anyway, and the
// same limits apply (a text past the characters left, or one that runs out of lookups, is bounded
// just the same). The event loop is let turn in between.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { countInSlices, SLICE_CHARS, TokenCount, textSlices } from '../../../gateway/metering/tokens.ts';
import { countExactly } from '../../../gateway/metering/o200k.ts';

/** Text of every kind o200k's pattern splits differently: words and contractions, numbers, punctuation, runs of spaces and newlines, CJK, emoji, NBSP, tabs. */
function mixed(chars: number, seed: number): string {
  const pieces = [
    'The gateway',
    " don't",
    " it's",
    ' 1234567',
    ' (parenthesised)',
    ' ...',
    '  two spaces',
    '\n\nnew paragraph',
    ' 日本語のテキスト',
    ' 🙂🙂',
    '\u00a0nbsp',
    '\ttab',
    ' CamelCaseWord',
    ' /path/to/file.ts',
    ' "quoted"',
    '   \n',
    ' x',
  ];
  let text = '';
  for (let i = seed; text.length < chars; i = (i * 31 + 7) % 1_000_003) text += pieces[i % pieces.length];
  return text;
}

/**
 * The texts, then `tokens`, counted in a thread of its own (its caches of counts and of merged
 * pieces empty, whatever this file counted before): in slices (countInSlices), or at once by
 * TokenCount.addText.
 */
function countedAlone(
  texts: readonly string[],
  tokens: number,
  sliced: boolean,
): Promise<{ tokens: number; fewest: number; counted: number; bounded: number }> {
  const module = new URL('../../../gateway/metering/tokens.ts', import.meta.url).href;
  const code = `const { parentPort, workerData } = require('node:worker_threads');
import(${JSON.stringify(module)}).then(async ({ TokenCount, countInSlices }) => {
  const report = (sink) => {
    for (const text of workerData.texts) sink.addText(text);
    sink.addTokens(workerData.tokens);
  };
  let count = new TokenCount();
  if (workerData.sliced) count = await countInSlices(report, count, () => Promise.resolve());
  else report(count);
  parentPort.postMessage({ tokens: count.tokens, fewest: count.fewest, counted: count.counted, bounded: count.bounded });
});`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { texts, tokens, sliced } });
    worker.once('message', (result) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('textSlices', () => {
  test('slices end just before a space that follows a character other than whitespace, and join back into the text', () => {
    const text = mixed(600_000, 3);
    const slices = [...textSlices(text, SLICE_CHARS)];
    assert.ok(slices.length > 5);
    assert.equal(slices.join(''), text);
    for (const slice of slices.slice(1)) {
      assert.equal(slice[0], ' ');
    }
    for (const slice of slices.slice(0, -1)) assert.doesNotMatch(slice.at(-1)!, /\s/);
  });

  test('a text without such a space is one slice', () => {
    assert.deepEqual([...textSlices('x'.repeat(200_000), SLICE_CHARS)].length, 1);
  });
});

describe('countInSlices counts as TokenCount does', () => {
  for (const [name, texts] of [
    ['one text of 900 Ki characters of mixed text', [mixed(900 * 1024, 1)]],
    ['a text longer than one count may scan (bounded either way)', [mixed(1100 * 1024, 2)]],
    ['16,000 short texts (most bounded once the characters run out)', Array.from({ length: 16_000 }, (_, i) => `block ${i} of words`)],
    ['long texts after the characters ran out', [mixed(700 * 1024, 4), mixed(400 * 1024, 5), 'short after']],
    ['a long unspaced run that runs out of lookups, then prose', ['ż'.repeat(300_000), mixed(200 * 1024, 6)]],
  ] as const) {
    test(name, async () => {
      assert.deepEqual(await countedAlone(texts, 7, true), await countedAlone(texts, 7, false));
    });
  }

  test('a long text counted in slices is its exact count, and the event loop turned while it was counted', async () => {
    const text = mixed(900 * 1024, 7);
    let pauses = 0;
    const counted = await countInSlices(
      (sink) => sink.addText(text),
      new TokenCount(),
      () => {
        pauses++;
        return new Promise((resolve) => setImmediate(resolve));
      },
    );
    assert.equal(counted.tokens, countExactly(text));
    assert.equal(counted.bounded, 0);
    assert.ok(pauses > 0, 'it let the event loop turn');
  });
});

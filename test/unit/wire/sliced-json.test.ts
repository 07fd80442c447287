// A backend's request body with long texts is encoded a slice at a time (wire/sliced-json.ts, issue
// 46 finding 15): the bytes are JSON.stringify's, escapes and surrogate pairs at the slices' edges
// included, and the event loop turns in between; a body without long texts is not taken that way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdsLongText, jsonInSlices, SLICED_JSON_CHARS } from '../../../gateway/wire/sliced-json.ts';

/** Text with everything JSON escapes, and emoji (surrogate pairs) at every offset: some straddle a slice's edge. */
function hard(chars: number): string {
  const pieces = ['plain words ', '"quoted" ', 'back\\slash ', 'line\nbreak\r\n', 'tab\t', '\u0001\u001f', '🙂', 'ż', '\u2028\u2029', 'x'];
  let text = '';
  for (let i = 0; text.length < chars; i++) text += pieces[i % pieces.length];
  return text;
}

test('a body holding long texts is written as JSON.stringify writes it, a slice at a time', async () => {
  for (const offset of [0, 1, 2, 3]) {
    const body = {
      model: 'chat',
      max_tokens: 8,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'y'.repeat(offset) + hard(1_300_000) },
        {
          role: 'user',
          content: [
            { type: 'text', text: hard(300_000) },
            { type: 'text', text: 'short' },
          ],
        },
      ],
      metadata: { note: null, n: 1.5, flag: true },
    };
    assert.ok(holdsLongText(body));
    let pauses = 0;
    const bytes = await jsonInSlices(body, () => {
      pauses++;
      return new Promise((resolve) => setImmediate(resolve));
    });
    assert.ok(bytes.equals(Buffer.from(JSON.stringify(body))), `offset ${offset}: the same bytes`);
    assert.ok(pauses > 0, 'the event loop turned while it was written');
  }
});

test('only plain objects and arrays are walked, and the walk counts their strings up to the bound', () => {
  assert.equal(holdsLongText({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }), false);
  assert.equal(holdsLongText({ a: 'x'.repeat(SLICED_JSON_CHARS - 1) }), false);
  assert.equal(holdsLongText({ a: 'x'.repeat(SLICED_JSON_CHARS / 2), b: ['x'.repeat(SLICED_JSON_CHARS / 2)] }), true);
  assert.equal(holdsLongText(Buffer.alloc(SLICED_JSON_CHARS * 2)), false, 'bytes already encoded are sent as they are');
});

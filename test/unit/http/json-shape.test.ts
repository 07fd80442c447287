// The shape of a JSON body counted as its bytes arrive (gateway/http/json-shape.ts): the same
// counts however the body is cut into chunks, nothing counted inside strings (escaped quotes and
// backslashes included), and the first bound passed named.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonShape, type JsonShapeLimits } from '../../../gateway/http/json-shape.ts';

const WIDE: JsonShapeLimits = { values: 1e9, depth: 1000, keys: 1e9 };

/** The shape's verdict for `text` fed in pieces of `size` bytes (0: whole). */
function verdict(text: string, limits: JsonShapeLimits, size = 0) {
  const bytes = Buffer.from(text);
  const shape = new JsonShape(limits);
  const step = size || bytes.length || 1;
  for (let i = 0; i < bytes.length; i += step) {
    const violation = shape.feed(bytes.subarray(i, i + step));
    if (violation) return violation;
  }
  return undefined;
}

/** The fewest values that make `text` pass: found by lowering the bound until it is refused. */
function valuesOf(text: string, size = 0): number {
  let n = 0;
  while (verdict(text, { ...WIDE, values: n }, size)) n++;
  return n;
}

const SAMPLES = [
  '{"model":"chat","messages":[{"role":"user","content":"Hello, [world] {a:b}"}],"max_tokens":5}',
  '{"a":"quote \\" inside, [and] a comma","b":[1,2,3],"c":{"d":"back\\\\slash","e":"\\\\\\"x"}}',
  '["\\\\","\\\\\\\\",",",":","[","{"]',
  '{"s":"\\u0022,\\u005b","n":[[1],[2,3],[]],"o":{}}',
];

describe('a JSON body shape', () => {
  test('commas, colons and brackets inside strings are not counted, escaped quotes included', () => {
    assert.equal(valuesOf('{"text":"a, b, [c], {d: e}, \\"f, g\\""}'), 1);
    assert.equal(valuesOf('["a,b","c\\\\",",d"]'), 3);
  });

  test('every way of cutting a body into chunks gives the same count', () => {
    for (const text of SAMPLES) {
      const whole = valuesOf(text);
      for (let size = 1; size <= 7; size++) assert.equal(valuesOf(text, size), whole, `${text} in pieces of ${size}`);
    }
  });

  test('a long string is skipped whole, even across chunks that end on a backslash', () => {
    const long = `{"p":"${'x\\\\'.repeat(5000)}\\"${'y,'.repeat(5000)}","q":[1,2]}`;
    for (const size of [0, 1, 2, 3, 49, 50, 64, 4096]) assert.equal(valuesOf(long, size), 4, `pieces of ${size}`);
  });

  test('the first bound passed is named: values, depth, members of one object', () => {
    assert.deepEqual(verdict(`[${'1,'.repeat(10)}1]`, { ...WIDE, values: 10 }), { kind: 'values', limit: 10 });
    assert.equal(verdict(`[${'1,'.repeat(9)}1]`, { ...WIDE, values: 10 }), undefined);
    assert.deepEqual(verdict(`${'['.repeat(9)}${']'.repeat(9)}`, { ...WIDE, depth: 8 }), { kind: 'depth', limit: 8 });
    assert.equal(verdict(`${'['.repeat(8)}${']'.repeat(8)}`, { ...WIDE, depth: 8 }), undefined);
    const members = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}`;
    assert.deepEqual(verdict(members(5), { ...WIDE, keys: 4 }), { kind: 'keys', limit: 4 });
    // Members are counted per object: two objects of 4 each pass a bound of 4.
    assert.equal(verdict(`[${members(4)},${members(4)}]`, { ...WIDE, keys: 4 }), undefined);
    assert.equal(verdict(`{"a":${members(4)},"b":1,"c":2,"d":3}`, { ...WIDE, keys: 4 }), undefined);
  });

  test('a million tiny arrays are refused at the bound, long before the end of the body', () => {
    const shape = new JsonShape({ values: 100_000, depth: 128, keys: 1024 });
    const piece = Buffer.from('[1],'.repeat(16_384));
    let fed = 0;
    let violation: ReturnType<JsonShape['feed']>;
    while (!violation && fed < 1_000_000 / 16_384) {
      violation = shape.feed(piece);
      fed++;
    }
    assert.deepEqual(violation, { kind: 'values', limit: 100_000 });
    // Each array is two values (itself and the comma after it): refused in the 4th piece of 16,384.
    assert.equal(fed, 4);
  });

  test('a key that could be __proto__ or constructor, spelt plainly, escaped or cut across chunks, marks the body suspect; a value does not', () => {
    const suspect = (text: string, size = 0) => {
      const shape = new JsonShape(WIDE);
      const bytes = Buffer.from(text);
      const step = size || bytes.length;
      for (let i = 0; i < bytes.length; i += step) shape.feed(bytes.subarray(i, i + step));
      return shape.suspect;
    };
    assert.equal(suspect('{"a":{"__proto__":{"x":1}}}'), true);
    assert.equal(suspect('{"constructor":{"prototype":{}}}'), true);
    assert.equal(suspect('{"\\u005f_proto__":{}}'), true);
    assert.equal(suspect('{"a":"__proto__","b":["constructor"]}'), false);
    assert.equal(suspect('{"model":"chat","messages":[{"role":"user","content":"hi"}]}'), false);
    for (let size = 1; size <= 12; size++) {
      assert.equal(suspect('{"__proto__":{}}', size), true, `pieces of ${size}`);
      assert.equal(suspect('{"model":"chat","messages":[{"role":"user","content":"hello there"}]}', size), false, `pieces of ${size}`);
    }
  });
});

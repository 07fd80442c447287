// The router's name put in place of the backend's model in a stream event's own JSON text, or
// nothing when that cannot be done safely (the caller then serialises the parsed chunk).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withModel } from '../../../gateway/wire/model-field.ts';

const NAME = JSON.stringify('my-router');

test('the value of "model" is replaced, the rest of the text kept byte for byte', () => {
  const event =
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"llama-3.1-8b","choices":[{"index":0,"delta":{"content":"Hi"}}]}';
  const out = withModel(event, NAME)!;
  assert.equal(out, event.replace('"llama-3.1-8b"', '"my-router"'));
  assert.deepEqual(JSON.parse(out), { ...JSON.parse(event), model: 'my-router' });
});

test('spaces around the colon, escapes in the old value and a name that needs escaping are handled', () => {
  assert.equal(withModel('{"model" : "a\\"b\\\\", "x": 1}', JSON.stringify('r"1')), '{"model" : "r\\"1", "x": 1}');
  assert.equal(JSON.parse(withModel('{ "model":\n"m" }', JSON.stringify('é/ü'))!).model, 'é/ü');
});

test('text that "model" appears in, escaped inside a string, is not a key and is left alone', () => {
  const event = '{"model":"m","choices":[{"delta":{"content":"the \\"model\\": field"}}]}';
  assert.deepEqual(JSON.parse(withModel(event, NAME)!), { model: 'my-router', choices: [{ delta: { content: 'the "model": field' } }] });
});

test('no model key, two of them, or a value that is not a string: undefined', () => {
  assert.equal(withModel('{"id":"x"}', NAME), undefined);
  assert.equal(withModel('{"model":"a","meta":{"model":"b"}}', NAME), undefined);
  assert.equal(withModel('{"model":null}', NAME), undefined);
  assert.equal(withModel('{"model":42}', NAME), undefined);
  assert.equal(withModel('{"model":"unterminated', NAME), undefined);
});

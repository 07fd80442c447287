// Token counting for backends that report no usage: OpenAI's o200k_base encoding, and OpenAI's
// chat accounting (3 tokens per message, 1 per name, 3 to prime the reply, 85 per image).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countChatPromptTokens, countInputTokens, countTextTokens } from '../../../gateway/usage/tokens.ts';

const REPLY_PRIMING = 3;
const PER_MESSAGE = 3;
const PER_NAME = 1;
const PER_IMAGE = 85;

describe('countTextTokens', () => {
  const cases: { text: string; tokens: number }[] = [
    { text: '', tokens: 0 },
    { text: 'Hello', tokens: 1 },
    { text: 'hello world', tokens: 2 },
    { text: 'The quick brown fox jumps over the lazy dog.', tokens: 10 },
    { text: '日本語のテキスト', tokens: 6 },
  ];
  for (const { text, tokens } of cases) {
    test(`${JSON.stringify(text)} is ${tokens} token(s) in o200k_base`, () => {
      assert.equal(countTextTokens(text), tokens);
    });
  }

  test('any non-empty text counts at least one token, and the same text always counts the same', () => {
    for (const text of [' ', 'a', '\n', '🙂', 'x'.repeat(5000), 'Lorem ipsum dolor sit amet, consectetur adipiscing elit.']) {
      const first = countTextTokens(text);
      assert.ok(first > 0, `${JSON.stringify(text.slice(0, 20))} counts ${first}`);
      assert.equal(countTextTokens(text), first);
    }
  });

  test('more text never counts fewer tokens', () => {
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    assert.ok(countTextTokens(sentence.repeat(10)) > countTextTokens(sentence.repeat(2)));
  });

  const special: { text: string; tokens: number }[] = [
    { text: '<|endoftext|>', tokens: 7 },
    { text: 'a <|endoftext|> b', tokens: 9 },
    { text: '<|im_start|>', tokens: 6 },
    { text: '<|endofprompt|>', tokens: 7 },
  ];
  for (const { text, tokens } of special) {
    test(`the special-token string ${JSON.stringify(text)} in user text is counted as plain text (${tokens} tokens), not thrown on`, () => {
      assert.doesNotThrow(() => countTextTokens(text));
      assert.equal(countTextTokens(text), tokens);
    });
  }
});

describe('countChatPromptTokens', () => {
  test('no messages still primes the reply', () => {
    assert.equal(countChatPromptTokens([]), REPLY_PRIMING);
  });

  test('each message adds its overhead to its content', () => {
    const one = [{ role: 'user', content: 'hello world' }];
    const two = [{ role: 'system', content: 'Hello' }, { role: 'user', content: 'hello world' }];
    assert.equal(countChatPromptTokens(one), REPLY_PRIMING + PER_MESSAGE + 2);
    assert.equal(countChatPromptTokens(two), REPLY_PRIMING + 2 * PER_MESSAGE + 1 + 2);
  });

  test('a name costs one token plus its own text', () => {
    assert.equal(countChatPromptTokens([{ role: 'user', name: 'bob', content: 'hello world' }]), REPLY_PRIMING + PER_MESSAGE + 2 + PER_NAME + 1);
  });

  test('text parts of a content array are counted, and each image counts as a low-detail image', () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hello world' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ];
    assert.equal(countChatPromptTokens(messages), REPLY_PRIMING + PER_MESSAGE + 2 + 2 * PER_IMAGE);
  });

  test('special-token strings in a message are counted, not thrown on', () => {
    assert.equal(countChatPromptTokens([{ role: 'user', content: '<|endoftext|>' }]), REPLY_PRIMING + PER_MESSAGE + 7);
  });

  test('a message without content (a tool call) costs only its overhead', () => {
    assert.equal(countChatPromptTokens([{ role: 'assistant', content: null, tool_calls: [] }]), REPLY_PRIMING + PER_MESSAGE);
  });
});

describe('countInputTokens (completions prompt, embeddings input)', () => {
  const cases: { name: string; input: unknown; tokens: number }[] = [
    { name: 'a string', input: 'hello world', tokens: 2 },
    { name: 'several strings', input: ['hello world', 'Hello'], tokens: 3 },
    { name: 'token ids: one each', input: [101, 2023, 102], tokens: 3 },
    { name: 'batches of token ids', input: [[1, 2, 3], [4, 5]], tokens: 5 },
    { name: 'a mix', input: ['hello world', [1, 2, 3], 7], tokens: 6 },
    { name: 'an empty string', input: '', tokens: 0 },
    { name: 'nothing', input: undefined, tokens: 0 },
  ];
  for (const { name, input, tokens } of cases) {
    test(`${name}: ${tokens} token(s)`, () => {
      assert.equal(countInputTokens(input), tokens);
    });
  }
});

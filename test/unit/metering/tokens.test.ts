// Token counting for backends that report no usage: OpenAI's o200k_base encoding, and OpenAI's
// chat accounting (3 tokens per message, 1 per name, 3 to prime the reply, 85 per image).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countChatPromptTokens, countInputTokens, countTextTokens, TokenBounds, TokenCount } from '../../../gateway/metering/tokens.ts';
import { countExactly } from '../../../gateway/metering/o200k.ts';

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
    const two = [
      { role: 'system', content: 'Hello' },
      { role: 'user', content: 'hello world' },
    ];
    assert.equal(countChatPromptTokens(one), REPLY_PRIMING + PER_MESSAGE + 2);
    assert.equal(countChatPromptTokens(two), REPLY_PRIMING + 2 * PER_MESSAGE + 1 + 2);
  });

  test('a name costs one token plus its own text', () => {
    assert.equal(
      countChatPromptTokens([{ role: 'user', name: 'bob', content: 'hello world' }]),
      REPLY_PRIMING + PER_MESSAGE + 2 + PER_NAME + 1,
    );
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
    {
      name: 'batches of token ids',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      tokens: 5,
    },
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

describe('TokenCount: counting bounded per request (issue 13)', () => {
  test('a text needing more rank lookups than allowed is bounded by its UTF-8 bytes, never below its count', () => {
    const run = 'x'.repeat(12_000); // 1,500 tokens, some 30,000 lookups to merge
    const count = new TokenCount({ chars: 1_000_000, lookups: 1_000 });
    count.addText(run);
    assert.equal(count.exact, false);
    assert.equal(count.tokens, 12_000);
    assert.equal(count.fewest, Math.ceil(12_000 / 128));
    const exact = countExactly(run);
    assert.equal(exact, 1_500);
    assert.ok(count.fewest <= exact && exact <= count.tokens);
  });

  test('texts past the characters one count may scan are bounded, the ones before counted exactly', () => {
    const count = new TokenCount({ chars: 600, lookups: 1_000_000 });
    count.addText('hello world'); // 11 + 256 characters of the 600
    count.addText('a'.repeat(350)); // does not fit: bounded
    count.addText('good morning'); // fits: counted
    assert.equal(count.counted, 2);
    assert.equal(count.bounded, 1);
    assert.equal(count.tokens, 2 + 350 + 2);
  });

  test('a flood of tiny texts is bounded too: each text costs 256 characters more than its length', () => {
    const count = new TokenCount({ chars: 10 * (256 + 6), lookups: 1_000_000 });
    for (let i = 0; i < 1_000; i++) count.addText(`fl${String(i).padStart(4, '0')}`);
    assert.equal(count.counted, 10);
    assert.equal(count.bounded, 990);
  });

  test('bounds hold in every script: the count lies between bytes / 128 and bytes', () => {
    for (const text of [
      '我们的网关把每个请求路由到提供者'.repeat(50),
      '🙂'.repeat(300),
      'é'.repeat(500),
      ' '.repeat(5_000),
      'The gateway. '.repeat(100),
    ]) {
      const bounded = new TokenCount({ chars: 0, lookups: 0 });
      bounded.addText(`${text}\u0000`); // not in the cache: bounded
      const exact = countExactly(`${text}\u0000`);
      assert.ok(bounded.fewest <= exact && exact <= bounded.tokens, `${bounded.fewest} <= ${exact} <= ${bounded.tokens}`);
      const cheap = new TokenBounds();
      cheap.addText(`${text}\u0000`);
      assert.ok(cheap.fewest <= exact && exact <= cheap.most, `${cheap.fewest} <= ${exact} <= ${cheap.most}`);
    }
  });

  test('a text counted before comes from the cache at no cost to the limits', () => {
    const text = 'A system prompt the application sends every time. '.repeat(10);
    const first = countTextTokens(text);
    const count = new TokenCount({ chars: 0, lookups: 0 });
    count.addText(text);
    assert.equal(count.exact, true);
    assert.equal(count.tokens, first);
  });
});

// The gateway's o200k count: the same counts as gpt-tokenizer's own, over its own compact rank
// table, which must be exactly what gpt-tokenizer's ranks encode to.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { generatedRanks, RANKS_FILE } from '../../../gateway/metering/generate-o200k-ranks.ts';
import { countExactly, countWithin } from '../../../gateway/metering/o200k.ts';
import { RankTable } from '../../../gateway/metering/o200k-ranks.ts';

const library = createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as {
  countTokens(text: string, options: object): number;
};
const libraryCount = (text: string) => library.countTokens(text, { disallowedSpecial: new Set() });

test("the committed rank table is what gpt-tokenizer's ranks encode to (npm run generate:o200k)", async () => {
  assert.deepEqual(new Uint8Array(await readFile(RANKS_FILE)), generatedRanks());
});

test('the table finds each token, by its bytes, at its rank, and nothing else', () => {
  const table = RankTable.read(generatedRanks());
  const bytes = (text: string) => new TextEncoder().encode(text);
  assert.equal(table.rank(bytes('!')), 0);
  assert.equal(table.rank(bytes('hello')), libraryEncode('hello')[0]);
  assert.equal(table.rank(bytes(' the')), libraryEncode(' the')[0]);
  const ranks = createRequire(import.meta.url)('gpt-tokenizer/cjs/bpeRanks/o200k_base').default as unknown[];
  const lone = ranks.findIndex((value) => Array.isArray(value) && value.length === 1 && value[0] === 161);
  assert.ok(lone > 0);
  assert.equal(table.rank(Uint8Array.of(161)), lone, 'a token that is not UTF-8 (a lone byte 0xA1)');
  assert.equal(table.rank(bytes('not one token at all')), undefined);
  assert.equal(table.rank(bytes('xhellox'), 1, 6), libraryEncode('hello')[0], 'a slice');
});

function libraryEncode(text: string): number[] {
  return (createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as { encode(t: string): number[] }).encode(text);
}

/** Texts of every kind a prompt has: prose, code, numbers, scripts, emoji, runs without spaces, special-token strings. */
function corpus(): string[] {
  const texts = [
    'Hello, world!',
    'The quick brown fox jumps over the lazy dog. ',
    "It's what they'd've said: don't, won't, I'm, you're.",
    'function add(a, b) {\n  return a + b;\n}\n\n// done\r\n',
    '12345678901234567890 3.14159 -42 1e10 0xDEADBEEF',
    '我们的网关请求路由 日本語のテキスト 한국어 텍스트',
    'Ünïcödé àçcéñts — “quotes” and ‘single’ … ellipsis',
    'Привет, мир! Γειά σου Κόσμε! مرحبا بالعالم שלום עולם',
    '🙂😀👍🏽 family: 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵',
    'a'.repeat(300),
    'ab'.repeat(200),
    `${'x'.repeat(70)} ${'yz'.repeat(40)}`,
    'supercalifragilisticexpialidocious antidisestablishmentarianism',
    '<|endoftext|> <|im_start|>user\nhi<|im_end|>',
    '   leading spaces and trailing   ',
    '\n\n\n\t\t tabs and newlines \n',
    'https://example.com/path?query=value&other=1#fragment',
    '{"json": [1, 2, 3], "nested": {"key": "value"}}',
  ];
  // Pseudo-random strings from several alphabets, as bpe-merge.test.ts makes them.
  const alphabets = ['c', 'ab', 'aeiourstln', 'ABCdef', '我们的网关请求路由', 'éèêàç', 'абвгд', '🙂😀a', '0123456789abcdef', '=-+', ' \n'];
  let x = 12345;
  const next = (m: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % m;
  };
  for (let i = 0; i < 300; i++) {
    const alphabet = [...alphabets[next(alphabets.length)]!];
    texts.push(Array.from({ length: 1 + next(400) }, () => alphabet[next(alphabet.length)]).join(''));
  }
  return texts;
}

test('every text of the corpus counts as gpt-tokenizer counts it', () => {
  for (const text of corpus()) assert.equal(countExactly(text), libraryCount(text), JSON.stringify(text.slice(0, 60)));
});

test('a count within enough lookups is the exact count; past its lookups it gives up', () => {
  const text = 'q'.repeat(5000);
  const within = countWithin(text, 1_000_000);
  assert.equal(within?.tokens, libraryCount(text));
  assert.ok(within!.lookups > 0);
  assert.equal(countWithin('z'.repeat(5000), 10), undefined);
});

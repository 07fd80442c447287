// A prompt as a chain of block hashes (prefix affinity): equal beginnings give equal leading
// hashes, a difference changes every hash from its block on, a block cut short is left out, and
// where the text breaks between messages counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BLOCK_CHARS, MAX_BLOCKS, PromptBlocks } from '../../../gateway/routing/prefix/prompt-blocks.ts';
import { promptTokenCount } from '../../../gateway/billing/usage-block.ts';

const chain = (messages: { role: string; content: string }[]) =>
  promptTokenCount('chat', { model: 'm', messages }, new PromptBlocks()).hashes;

const SYSTEM = 'You are a careful assistant. '.repeat(40); // 1160 characters: 4 whole blocks

test('a shared system prompt gives the same leading hashes; the question changes the rest', () => {
  const one = chain([
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'What is the capital of France? '.repeat(10) },
  ]);
  const two = chain([
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'How far is the moon from here? '.repeat(10) },
  ]);
  const whole = Math.floor(SYSTEM.length / BLOCK_CHARS);
  assert.ok(one.length > whole && two.length > whole);
  assert.deepEqual(one.slice(0, whole), two.slice(0, whole), 'the system prompt blocks match');
  for (let i = whole; i < Math.min(one.length, two.length); i++) assert.notEqual(one[i], two[i], `block ${i} differs`);
});

test('a conversation that grows keeps its earlier turns as a prefix', () => {
  const turn1 = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Tell me about prefix caches. '.repeat(12) },
  ];
  const turn2 = [...turn1, { role: 'assistant', content: 'They keep the KV blocks. '.repeat(12) }, { role: 'user', content: 'More.' }];
  const first = chain(turn1);
  const second = chain(turn2);
  assert.deepEqual(second.slice(0, first.length), first);
  assert.ok(second.length > first.length);
});

test('a block cut short is left out; the hashes are 16 hex digits', () => {
  const blocks = new PromptBlocks();
  blocks.addText('x'.repeat(BLOCK_CHARS * 2 + 10));
  assert.equal(blocks.hashes.length, 2);
  for (const hash of blocks.hashes) assert.match(hash, /^[0-9a-f]{16}$/);
});

test('where the text breaks between messages counts', () => {
  const a = chain([
    { role: 'user', content: 'a'.repeat(BLOCK_CHARS) },
    { role: 'user', content: 'b'.repeat(BLOCK_CHARS) },
  ]);
  const b = chain([
    { role: 'user', content: 'a'.repeat(BLOCK_CHARS + 1) },
    { role: 'user', content: 'b'.repeat(BLOCK_CHARS - 1) },
  ]);
  assert.notDeepEqual(a, b);
});

test('a huge prompt is hashed up to MAX_BLOCKS blocks', () => {
  const blocks = new PromptBlocks();
  blocks.addText('y'.repeat(BLOCK_CHARS * (MAX_BLOCKS + 5)));
  assert.equal(blocks.hashes.length, MAX_BLOCKS);
});

// Token counting for backends that report no usage, with OpenAI's o200k_base encoding. Counts for
// other model families are close, not exact; the upstream's own usage is always preferred.
import { createRequire } from 'node:module';
import { TokenCountCache } from './token-count-cache.ts';

type CountTokens = typeof import('gpt-tokenizer/encoding/o200k_base').countTokens;
/**
 * The o200k_base tables cost about 75 MB of memory (RSS of a bare Node process: 43 MB, with the
 * encoding loaded: 117 MB), more than the rest of the gateway: they are loaded on the first count,
 * not at start-up, so a gateway whose backends report usage and that counts no prompt (no token
 * rate limit) never pays for them. Loaded synchronously (require), as counting is synchronous.
 */
let countTokens: CountTokens | undefined;
const load = (): CountTokens => (countTokens ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens }).countTokens);

// User text may contain special-token strings such as <|endoftext|>; they count as plain text.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** OpenAI's chat accounting: 3 tokens per message, 1 per name, 3 to prime the reply. */
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;
/** An image part is counted as OpenAI counts a low-detail image. */
const PER_IMAGE = 85;

/** Up to 8 Mi characters of recent long texts (conversation histories, system prompts). */
const cache = new TokenCountCache(8 * 1024 * 1024);
const countPlain = (text: string) => (countTokens ?? load())(text, PLAIN_TEXT);

export function countTextTokens(text: string): number {
  return text === '' ? 0 : cache.count(text, countPlain);
}

export function countChatPromptTokens(messages: readonly unknown[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    if (message === null || typeof message !== 'object') continue;
    const { content, name } = message as { content?: unknown; name?: unknown };
    total += PER_MESSAGE + countContentTokens(content);
    if (typeof name === 'string') total += PER_NAME + countTextTokens(name);
  }
  return total;
}

function countContentTokens(content: unknown): number {
  if (typeof content === 'string') return countTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (typeof part?.text === 'string') total += countTextTokens(part.text);
    else if (part?.type === 'image_url') total += PER_IMAGE;
  }
  return total;
}

/** Prompt tokens of a completions or embeddings `input`: a string, strings, or token arrays. */
export function countInputTokens(input: unknown): number {
  if (typeof input === 'string') return countTextTokens(input);
  if (!Array.isArray(input)) return 0;
  let total = 0;
  for (const item of input) {
    if (typeof item === 'string') total += countTextTokens(item);
    else if (typeof item === 'number') total += 1;
    else if (Array.isArray(item)) total += item.length;
  }
  return total;
}

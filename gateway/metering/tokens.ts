// Token counting for backends that report no usage, with OpenAI's o200k_base encoding. Counts for
// other model families are close, not exact; the upstream's own usage is always preferred.
//
// Counting is bounded per request (issue 13: one request of 150,000 letters without a space held
// the event loop for 8 s). Each count (a request's prompt, or its completion) may scan
// EXACT_CHARS characters and make EXACT_LOOKUPS rank lookups (o200k.ts); a text past either is
// not counted but bounded: o200k never makes more tokens than UTF-8 bytes (a token is at least
// one byte) nor fewer than bytes / 128 (its longest token). So a count is exact, or an upper bound
// (`tokens`) with a lower bound beside it (`fewest`), never a guess.
import { countWithin, MAX_TOKEN_BYTES } from './o200k.ts';
import { TokenCountCache } from './token-count-cache.ts';

/** OpenAI's chat accounting: 3 tokens per message, 1 per name, 3 to prime the reply. */
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;
/** An image part is counted as OpenAI counts a low-detail image. */
const PER_IMAGE = 85;

/** Characters one count may scan exactly: about 40-90 ms of ordinary text on the bench machine. */
export const EXACT_CHARS = 1024 * 1024;
/** Rank lookups one count may make (about 0.8 µs each, so some 40 ms): what unusual text (long runs, rare words and scripts) costs. */
export const EXACT_LOOKUPS = 50_000;
/** What a text costs of EXACT_CHARS beyond its length (a call costs 3-12 µs): so a flood of tiny texts is bounded too. */
const PER_TEXT_CHARS = 256;

/** Up to 8 Mi characters and 256 Ki texts of recent counts (conversation histories, system prompts). */
const cache = new TokenCountCache(8 * 1024 * 1024, 256 * 1024);

export interface TokenCountLimits {
  readonly chars: number;
  readonly lookups: number;
}

/** What the walks of a prompt below report to: texts, and tokens known without counting text. */
export interface TokenSink {
  addText(text: string): void;
  addTokens(tokens: number): void;
}

/**
 * Bounds of a prompt's count without counting: UTF-8 bytes are at least its UTF-16 length and at
 * most three times it, so the count is between ceil(length / 128) and 3 × length per text. Costs
 * a walk over the messages and nothing per character: what a request is checked against first.
 */
export class TokenBounds implements TokenSink {
  fewest = 0;
  most = 0;
  /** Characters (UTF-16 code units) of the texts: what counting them would cost. */
  chars = 0;

  addText(text: string): void {
    this.chars += text.length;
    this.fewest += Math.ceil(text.length / MAX_TOKEN_BYTES);
    this.most += 3 * text.length;
  }

  addTokens(tokens: number): void {
    this.fewest += tokens;
    this.most += tokens;
  }
}

/** The tokens of one request's texts, counted within the limits. */
export class TokenCount implements TokenSink {
  /** The count, or an upper bound of it when `exact` is false. */
  tokens = 0;
  /** A lower bound of the count (the count itself when exact). */
  fewest = 0;
  /** Texts counted exactly (from the cache or counted now), and bounded instead. */
  counted = 0;
  bounded = 0;
  #chars: number;
  #lookups: number;

  constructor(limits: TokenCountLimits = { chars: EXACT_CHARS, lookups: EXACT_LOOKUPS }) {
    this.#chars = limits.chars;
    this.#lookups = limits.lookups;
  }

  get exact(): boolean {
    return this.bounded === 0;
  }

  /** Adds tokens known without counting text (message overheads, images, token arrays). */
  addTokens(tokens: number): void {
    this.tokens += tokens;
    this.fewest += tokens;
  }

  addText(text: string): void {
    if (text === '') return;
    const known = cache.get(text);
    if (known !== undefined) {
      this.#exact(known);
      return;
    }
    const chars = text.length + PER_TEXT_CHARS;
    if (chars > this.#chars) {
      this.#bound(text);
      return;
    }
    // Charged before counting: a text that runs out of lookups was scanned all the same. Once
    // they are spent, later texts are still counted when they need none (common words only).
    this.#chars -= chars;
    const counted = countWithin(text, this.#lookups);
    if (counted === undefined) {
      this.#lookups = 0;
      this.#bound(text);
      return;
    }
    this.#lookups -= counted.lookups;
    cache.set(text, counted.tokens);
    this.#exact(counted.tokens);
  }

  /** A text not counted: between its UTF-8 bytes / 128 and its UTF-8 bytes. */
  #bound(text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    this.tokens += bytes;
    this.fewest += Math.ceil(bytes / MAX_TOKEN_BYTES);
    this.bounded++;
  }

  #exact(tokens: number): void {
    this.addTokens(tokens);
    this.counted++;
  }
}

/** Upper bounds, for callers that need no more: the count's `tokens`. */
export function countTextTokens(text: string): number {
  const count = new TokenCount();
  count.addText(text);
  return count.tokens;
}

export function countChatPromptTokens(messages: readonly unknown[]): number {
  return chatPromptTokens(messages, new TokenCount()).tokens;
}

export function countInputTokens(input: unknown): number {
  return inputTokens(input, new TokenCount()).tokens;
}

export function chatPromptTokens<Sink extends TokenSink>(messages: readonly unknown[], count: Sink): Sink {
  count.addTokens(REPLY_PRIMING);
  for (const message of messages) {
    if (message === null || typeof message !== 'object') continue;
    const { content, name } = message as { content?: unknown; name?: unknown };
    count.addTokens(PER_MESSAGE);
    contentTokens(content, count);
    if (typeof name === 'string') {
      count.addTokens(PER_NAME);
      count.addText(name);
    }
  }
  return count;
}

function contentTokens(content: unknown, count: TokenSink): void {
  if (typeof content === 'string') {
    count.addText(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (typeof part?.text === 'string') count.addText(part.text);
    else if (part?.type === 'image_url') count.addTokens(PER_IMAGE);
  }
}

/** Prompt tokens of a completions or embeddings `input`: a string, strings, or token arrays. */
export function inputTokens<Sink extends TokenSink>(input: unknown, count: Sink): Sink {
  if (typeof input === 'string') {
    count.addText(input);
    return count;
  }
  if (!Array.isArray(input)) return count;
  for (const item of input) {
    if (typeof item === 'string') count.addText(item);
    else if (typeof item === 'number') count.addTokens(1);
    else if (Array.isArray(item)) count.addTokens(item.length);
  }
  return count;
}

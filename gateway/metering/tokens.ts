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

/**
 * Texts longer than this are counted a slice at a time by countInSlices: counting 1 Mi characters
 * of prose in one go held the event loop 40-90 ms.
 */
export const SLICE_CHARS = 64 * 1024;
/** countInSlices lets the event loop turn once it has counted for this long. */
const SLICE_MS = 8;

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

  /**
   * As addText, but a text longer than SLICE_CHARS is counted a slice at a time, `pace` awaited
   * after each (it lets the event loop turn when the count has run long). The slices end where
   * o200k's pattern splits anyway (textSlices), so their counts add up to the text's.
   */
  async addTextPaced(text: string, pace: () => Promise<void> | undefined): Promise<void> {
    if (text.length <= SLICE_CHARS || cache.get(text) !== undefined || text.length + PER_TEXT_CHARS > this.#chars) {
      this.addText(text);
      return pace();
    }
    this.#chars -= text.length + PER_TEXT_CHARS;
    let tokens = 0;
    for (const slice of textSlices(text, SLICE_CHARS)) {
      const counted = countWithin(slice, this.#lookups);
      if (counted === undefined) {
        this.#lookups = 0;
        this.#bound(text);
        return;
      }
      this.#lookups -= counted.lookups;
      tokens += counted.tokens;
      await pace();
    }
    cache.set(text, tokens);
    this.#exact(tokens);
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

/** What a walk reported, in order, to be counted after (countInSlices). */
class Reported implements TokenSink {
  readonly items: (string | number)[] = [];

  addText(text: string): void {
    this.items.push(text);
  }

  addTokens(tokens: number): void {
    this.items.push(tokens);
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What `report` reports, counted as a TokenCount counts it (the same limits, the same result), but
 * never for more than SLICE_MS at a time: the event loop turns in between (`pause`), so that a
 * prompt of many texts, or of long ones, does not hold every other request.
 */
export async function countInSlices(report: (sink: TokenSink) => void, count = new TokenCount(), pause = nextTurn): Promise<TokenCount> {
  const reported = new Reported();
  report(reported);
  let since = performance.now();
  const pace = () => {
    if (performance.now() - since < SLICE_MS) return undefined;
    return pause().then(() => {
      since = performance.now();
    });
  };
  for (const item of reported.items) {
    if (typeof item === 'number') count.addTokens(item);
    else await count.addTextPaced(item, pace);
  }
  return count;
}

/**
 * `text` cut into slices of about `size` characters, each ending just before a space (U+0020)
 * that follows a character other than whitespace. o200k's pattern always splits there (a piece
 * holds whitespace only at its start, or is all whitespace), and what follows is split the same
 * from there as from a slice's start: so the slices' counts add up to the text's. A text without
 * such a space is one slice.
 */
export function* textSlices(text: string, size: number): Generator<string> {
  let start = 0;
  while (text.length - start > size) {
    const end = cutBefore(text, start, start + size);
    if (end === undefined) break;
    yield text.slice(start, end);
    start = end;
  }
  yield text.slice(start);
}

/** The last place after `start` and at or before `near` to cut (else the first after it): a space after a character that is not whitespace. */
function cutBefore(text: string, start: number, near: number): number | undefined {
  const cuttable = (at: number) => text.charCodeAt(at) === 32 && !/\s/.test(text[at - 1]!);
  for (let at = near; at > start + 1; at--) if (cuttable(at)) return at;
  for (let at = near + 1; at < text.length; at++) if (cuttable(at)) return at;
  return undefined;
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

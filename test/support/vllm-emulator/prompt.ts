// The prompt's tokens, as a chat template would lay them out: the tools (when given), then each
// message's role and content in order, then the assistant's turn. Each part is encoded on its
// own with o200k (gpt-tokenizer), so two requests that share their first messages share their
// first tokens exactly, and so their first KV blocks: what prefix caching and prefix-aware routing
// depend on. The token ids are not a real model's; their count and their sharing are what matter.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

export interface PromptMessage {
  readonly role: string;
  /** The text of the message (text parts joined; other parts leave nothing). */
  readonly text: string;
}

/** Special-token text in a prompt is text here (the library would throw on it). */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * A run of more than this many non-space (or space) characters is encoded in pieces: gpt-tokenizer merges one
 * pre-token in time quadratic in its length, so a 1 MiB word would stall the emulator. Real
 * text never has such runs; for it the encoding is the library's, exactly.
 */
const LONG_RUN = 256;
const LONG_RUN_PATTERN = new RegExp(`\\S{${LONG_RUN + 1},}|\\s{${LONG_RUN + 1},}`);

/** Encoded parts remembered (system prompts repeat across requests), bounded by the tokens they hold. */
const CACHE_TOKENS = 2_000_000;
const cache = new Map<string, Uint32Array>();
let cachedTokens = 0;

export function promptTokens(messages: readonly PromptMessage[], tools: string | undefined): Uint32Array {
  const parts: Uint32Array[] = [];
  if (tools !== undefined) parts.push(encodeCached(`<tools>\n${tools}\n`));
  for (const message of messages) parts.push(encodeCached(`<${message.role}>\n${message.text}\n`));
  parts.push(encodeCached('<assistant>\n'));
  const all = new Uint32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

function encodeCached(text: string): Uint32Array {
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const tokens = Uint32Array.from(encodeBounded(text));
  if (tokens.length > CACHE_TOKENS) return tokens;
  while (cachedTokens + tokens.length > CACHE_TOKENS) {
    const [oldest, value] = cache.entries().next().value!;
    cache.delete(oldest);
    cachedTokens -= value.length;
  }
  cache.set(text, tokens);
  cachedTokens += tokens.length;
  return tokens;
}

function encodeBounded(text: string): number[] {
  if (!LONG_RUN_PATTERN.test(text)) return encode(text, AS_TEXT);
  const tokens: number[] = [];
  let plain = '';
  const flush = () => {
    if (plain !== '') for (const token of encode(plain, AS_TEXT)) tokens.push(token);
    plain = '';
  };
  for (const piece of text.split(/(\s+)/)) {
    if (piece.length <= LONG_RUN) {
      plain += piece;
      continue;
    }
    flush();
    for (let at = 0; at < piece.length; at += LONG_RUN) {
      for (const token of encode(piece.slice(at, at + LONG_RUN), AS_TEXT)) tokens.push(token);
    }
  }
  flush();
  return tokens;
}

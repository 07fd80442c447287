// OpenAI's o200k_base encoding (gpt-tokenizer), counted within a bound on the work. Two changes to
// the library's BPE core, both on its one o200k instance in this process: chunks of more than
// HEAP_MERGE_FROM bytes are merged in O(n log n) (bpe-merge.ts, same result), and every rank lookup
// of a byte sequence (the unit of merging work, about 0.5-1 µs) is metered, so that a count that
// would take more than its share of lookups stops and the caller falls back to an upper bound.
// gpt-tokenizer is pinned (package.json): the members used here are its BytePairEncodingCore's.
import { createRequire } from 'node:module';
import { bpeMergeStarts } from './bpe-merge.ts';

/** Chunks up to this many bytes keep the library's own merge: for them it is the faster. */
const HEAP_MERGE_FROM = 64;

/** o200k's longest token, in UTF-8 bytes: so a text of n bytes has at least ceil(n / 128) tokens. */
export const MAX_TOKEN_BYTES = 128;

// User text may contain special-token strings such as <|endoftext|>; they count as plain text.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

interface BpeCore {
  bytePairMerge(piece: Uint8Array): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  getBpeRankFromBytesOrThrow(bytes: Uint8Array): number;
}

type O200k = typeof import('gpt-tokenizer/encoding/o200k_base');
type CountTokens = O200k['countTokens'];

class OutOfLookups extends Error {}

/** Rank lookups the count in progress may make, and has made (counting is synchronous: one at a time). */
let lookupLimit = Infinity;
let lookupsMade = 0;

/**
 * The encoding's tables cost about 75 MB of memory (a bare Node process holds 43 MB, one with the
 * encoding loaded 117 MB) and about 0.4 s to load, during which the process does nothing else.
 * They are loaded when first needed (loadEncoding, or the first count): the gateway loads them
 * before it listens, so no request waits; a process that never counts (the operator, a script)
 * never pays for them. Loaded with require, as counting is synchronous.
 */
let countTokens: CountTokens | undefined;

/** Loads the encoding now, if it is not loaded yet. */
export function loadEncoding(): void {
  countTokens ??= load();
}

function load(): CountTokens {
  const o200k = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as O200k;
  const core = (o200k.default as unknown as { bytePairEncodingCoreProcessor: BpeCore }).bytePairEncodingCoreProcessor;
  const rankOf = core?.getBpeRankFromBytes.bind(core);
  const naiveMerge = core?.bytePairMerge.bind(core);
  if (typeof rankOf !== 'function' || typeof naiveMerge !== 'function')
    throw new Error('gpt-tokenizer changed: its BPE core is not the one o200k.ts expects');
  const meteredRankOf = (bytes: Uint8Array): number | undefined => {
    if (++lookupsMade > lookupLimit) throw new OutOfLookups();
    return rankOf(bytes);
  };
  core.getBpeRankFromBytes = meteredRankOf;
  core.bytePairMerge = (piece: Uint8Array): number[] => {
    if (piece.length <= HEAP_MERGE_FROM) return naiveMerge(piece);
    const starts = bpeMergeStarts(piece, meteredRankOf);
    return starts.map((start, i) => core.getBpeRankFromBytesOrThrow(piece.subarray(start, starts[i + 1] ?? piece.length)));
  };
  return o200k.countTokens;
}

/** The exact o200k count of `text`, or undefined when it needs more than `lookups` rank lookups. */
export function countWithin(text: string, lookups: number): { tokens: number; lookups: number } | undefined {
  lookupLimit = lookups;
  lookupsMade = 0;
  try {
    countTokens ??= load();
    const tokens = countTokens(text, PLAIN_TEXT);
    return { tokens, lookups: lookupsMade };
  } catch (error) {
    if (error instanceof OutOfLookups) return undefined;
    throw error;
  } finally {
    lookupLimit = Infinity;
  }
}

/** The exact o200k count of `text`, however long it takes (tests, scripts). */
export function countExactly(text: string): number {
  countTokens ??= load();
  return countTokens(text, PLAIN_TEXT);
}

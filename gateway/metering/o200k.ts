// OpenAI's o200k_base encoding, counted within a bound on the work. gpt-tokenizer's algorithm
// (pinned in package.json), as its BytePairEncodingCore runs it for a count, over a compact rank
// table (o200k-ranks.ts: 5 MB instead of the library's 46 MB of heap): the text split by
// o200k's pattern; a piece that is a token counts one; else its bytes are merged (the library's
// merge up to HEAP_MERGE_FROM bytes, an O(n log n) one beyond: bpe-merge.ts, same result), with
// the library's cache of merged pieces. Every rank lookup of a merge (the unit of merging work,
// about 0.5-1 µs) is metered, so that a count that would take more than its share of lookups
// stops and the caller falls back to an upper bound. The same lookups are made, and metered, as
// when the library counted (test/unit/metering/o200k.test.ts compares the counts with it).
import { readFileSync } from 'node:fs';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { bpeMergeStarts } from './bpe-merge.ts';
import { RankTable } from './o200k-ranks.ts';

/** Chunks up to this many bytes keep the library's own merge: for them it is the faster. */
const HEAP_MERGE_FROM = 64;

/** o200k's longest token, in UTF-8 bytes: so a text of n bytes has at least ceil(n / 128) tokens. */
export const MAX_TOKEN_BYTES = 128;

/** Merged pieces remembered, as the library's merge cache (DEFAULT_MERGE_CACHE_SIZE): their token counts. */
const MERGE_CACHE_SIZE = 100_000;

class OutOfLookups extends Error {}

/** Rank lookups the count in progress may make, and has made (counting is synchronous: one at a time). */
let lookupLimit = Infinity;
let lookupsMade = 0;

/**
 * Loaded when first needed (loadEncoding, or the first count): about 20 ms to read the file and
 * build the hash table. The gateway loads it before it listens; a process that never counts (the
 * operator, a script) never pays for it.
 */
let table: RankTable | undefined;
const mergeCache = new Map<string, number>();
const encoder = new TextEncoder();
/** Room for the UTF-8 of any piece that may be a token (MAX_TOKEN_BYTES UTF-16 units: at most 3 bytes each). */
const scratch = new Uint8Array(3 * MAX_TOKEN_BYTES);

/** Loads the rank table now, if it is not loaded yet. */
export function loadEncoding(): void {
  table ??= RankTable.read(readFileSync(new URL('./o200k-ranks.bin', import.meta.url)));
}

function rankOf(bytes: Uint8Array): number | undefined {
  if (++lookupsMade > lookupLimit) throw new OutOfLookups();
  return table!.rank(bytes);
}

/** The tokens of a piece that is not itself a token (the library's bytePairEncode, counting). */
function mergedTokens(piece: string): number {
  if (piece.length === 1 && piece.charCodeAt(0) < 128) return 1;
  const cached = mergeCache.get(piece);
  if (cached !== undefined) {
    mergeCache.delete(piece);
    mergeCache.set(piece, cached);
    return cached;
  }
  const bytes = encoder.encode(piece);
  const tokens = bytes.length <= HEAP_MERGE_FROM ? naiveMerge(bytes) : heapMerge(bytes);
  if (mergeCache.size >= MERGE_CACHE_SIZE) mergeCache.delete(mergeCache.keys().next().value!);
  mergeCache.set(piece, tokens);
  return tokens;
}

/** The library's bytePairMerge, lookup for lookup: the lowest-ranked pair merged first, leftmost of equals. */
function naiveMerge(piece: Uint8Array): number {
  const starts: number[] = [];
  const ranks: number[] = [];
  const pairRank = (index: number, from = starts[index], to = starts[index + 2]) =>
    to === undefined ? Infinity : (rankOf(piece.subarray(from, to)) ?? Infinity);
  for (let i = 0; i <= piece.length; i++) {
    starts.push(i);
    ranks.push(i < piece.length - 1 ? pairRank(i, i, i + 2) : Infinity);
  }
  while (starts.length > 1) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < ranks.length - 1; i++) {
      if (ranks[i]! < lowest) {
        lowest = ranks[i]!;
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at, 1);
    ranks[at] = pairRank(at);
    if (at > 0) ranks[at - 1] = pairRank(at - 1);
  }
  return resolved(piece, starts.slice(0, -1), starts.at(-1)!);
}

function heapMerge(piece: Uint8Array): number {
  return resolved(piece, bpeMergeStarts(piece, rankOf), piece.length);
}

/** The library looks up each resulting token's rank (it returns the ranks): the same lookups, metered. */
function resolved(piece: Uint8Array, starts: readonly number[], end: number): number {
  for (let i = 0; i < starts.length; i++) {
    if (rankOf(piece.subarray(starts[i], starts[i + 1] ?? end)) === undefined) throw new Error('o200k: a merged piece is not a token');
  }
  return starts.length;
}

/** The count of `text` as plain text (special-token strings such as <|endoftext|> count as text). */
function countTokens(text: string): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    // The library looks a whole piece up by its string, unmetered. A piece longer than any token
    // cannot be one; shorter ones are encoded into one reused buffer, not a new array each.
    const whole = piece.length <= MAX_TOKEN_BYTES && table!.rank(scratch, 0, encoder.encodeInto(piece, scratch).written) !== undefined;
    tokens += whole ? 1 : mergedTokens(piece);
  }
  return tokens;
}

/** The exact o200k count of `text`, or undefined when it needs more than `lookups` rank lookups. */
export function countWithin(text: string, lookups: number): { tokens: number; lookups: number } | undefined {
  lookupLimit = lookups;
  lookupsMade = 0;
  try {
    loadEncoding();
    const tokens = countTokens(text);
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
  loadEncoding();
  return countTokens(text);
}

// Writes o200k-ranks.bin from gpt-tokenizer's o200k_base ranks (`npm run generate:o200k`): run it
// after updating gpt-tokenizer; test/unit/metering/o200k-ranks.test.ts fails until it has been.
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { encodeRanks } from './o200k-ranks.ts';

export const RANKS_FILE = new URL('./o200k-ranks.bin', import.meta.url);

/** The file as gpt-tokenizer's ranks make it (loads them: about 46 MB, for this process only). */
export function generatedRanks(): Uint8Array {
  const ranks = createRequire(import.meta.url)('gpt-tokenizer/cjs/bpeRanks/o200k_base').default as (string | number[])[];
  return encodeRanks(ranks);
}

if (import.meta.main) await writeFile(RANKS_FILE, generatedRanks());

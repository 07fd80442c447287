// A request body for a backend with long texts in it (a 10 MB prompt), encoded as JSON a slice at
// a time: JSON.stringify of a body holding a 10 MB string, then its encoding to UTF-8, held the
// event loop 90 ms in one go. Here each long string is written in slices of SLICE_CHARS, and the
// event loop turns whenever the encoding has run for SLICE_MS. The bytes are the same as
// JSON.stringify's (a slice never ends between the two halves of a surrogate pair).
import { randomUUID } from 'node:crypto';

/** A payload holding strings of this many characters in all, or more, is encoded in slices. */
export const SLICED_JSON_CHARS = 1024 * 1024;
/** Strings this long or longer are written a slice of this many characters at a time. */
const SLICE_CHARS = 256 * 1024;
/** The encoding lets the event loop turn once it has run this long. */
const SLICE_MS = 8;

/**
 * Whether `value` holds strings of SLICED_JSON_CHARS characters or more in all: a walk of its plain
 * objects and arrays (nothing else is JSON to encode here) that stops as soon as it knows.
 */
export function holdsLongText(value: unknown): boolean {
  let chars = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') {
      chars += next.length;
      if (chars >= SLICED_JSON_CHARS) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) stack.push(item);
    } else if (next !== null && typeof next === 'object' && isPlain(next)) {
      for (const key in next) stack.push((next as Record<string, unknown>)[key]);
    }
  }
  return false;
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `value` as JSON.stringify writes it, in UTF-8, its long strings written a slice at a time between turns of the event loop. */
export async function jsonInSlices(value: unknown, pause = nextTurn): Promise<Buffer> {
  // The body with each long string replaced by a name no text can hold; then each written in its place.
  const marker = `tollgate-long-text-${randomUUID()}-`;
  const long: string[] = [];
  const skeleton = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'string' || item.length < SLICE_CHARS) return item;
    long.push(item);
    return `${marker}${long.length - 1}`;
  });
  const parts: Buffer[] = [];
  let since = performance.now();
  const pace = async () => {
    if (performance.now() - since < SLICE_MS) return;
    await pause();
    since = performance.now();
  };
  const pieces = skeleton.split(new RegExp(`"${marker}(\\d+)"`));
  for (let i = 0; i < pieces.length; i++) {
    if (i % 2 === 0) {
      parts.push(Buffer.from(pieces[i]!));
      continue;
    }
    const text = long[Number(pieces[i])]!;
    parts.push(Buffer.from('"'));
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + SLICE_CHARS);
      // Not between the halves of a surrogate pair: each half alone would be written escaped.
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      parts.push(Buffer.from(JSON.stringify(text.slice(start, end)).slice(1, -1)));
      start = end;
      await pace();
    }
    parts.push(Buffer.from('"'));
  }
  return Buffer.concat(parts);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

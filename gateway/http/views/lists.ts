// The list envelopes of the API's answers: OpenAI's `{ object: 'list', data }`, and for lists
// read a page at a time the id to pass as `after` for the next page. Shapes only (zod and
// nothing else), so the Playground can import their types (web/api.ts).
import { z } from 'zod';

/** A whole list: every item at once. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.strictObject({ object: z.literal('list'), data: z.array(item) });
}

/** One page of a list. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.strictObject({
    object: z.literal('list'),
    data: z.array(item),
    next: z.string().nullable().describe('The id to pass as `after` for the next page; null on the last page.'),
  });
}

/** A whole list, as answered. */
export function list<T>(data: T[]): { object: 'list'; data: T[] } {
  return { object: 'list', data };
}

/** One page of a list, as answered. */
export function page<T>(data: T[], next: string | null): { object: 'list'; data: T[]; next: string | null } {
  return { object: 'list', data, next };
}

// Paging and ordering shared by the memory and Redis stores.
import type { ApiKeyRecord } from './accounts.ts';
import type { UsageQuery, UsageRecord } from './usage-log.ts';

/**
 * A position in a user's log, `<ms>-<sequence>` (a Redis stream id): newest first means
 * higher positions first. `next` of a page is the position of its last record.
 */
export type Position = readonly [ms: number, seq: number];

export function parsePosition(cursor: string): Position {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(cursor);
  if (!match) throw new RangeError(`not a usage page cursor: "${cursor}"`);
  return [Number(match[1]), Number(match[2])];
}

export const formatPosition = ([ms, seq]: Position): string => `${ms}-${seq}`;

/** Negative when `a` comes before `b` in time. */
export function comparePositions(a: Position, b: Position): number {
  return a[0] - b[0] || a[1] - b[1];
}

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`page limit must be a positive integer, got ${limit}`);
}

/** Whether a record falls in the query's time range and router (the cursor aside). */
export function matches(record: UsageRecord, query: UsageQuery): boolean {
  return (
    (query.from === undefined || record.time >= query.from) &&
    (query.to === undefined || record.time <= query.to) &&
    (query.router === undefined || record.router === query.router)
  );
}

/** Whether a key still works at `now` (an ISO time): neither revoked nor expired. */
export function isActiveKey(key: ApiKeyRecord, now: string): boolean {
  return key.revoked_at === null && (key.expires_at === null || Date.parse(key.expires_at) > Date.parse(now));
}

/** Keys in the order they were made (ids break ties). */
export function byCreation(a: ApiKeyRecord, b: ApiKeyRecord): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// Reading what was just written. In standalone mode the gateway serves a write at once. In
// Kubernetes mode the admin API writes a custom resource and answers; the gateway serves the
// change only once the operator has published it, about a second later. So a page that re-read
// its list once after a write would still show the old list until a reload. These helpers read
// again for a few seconds instead. They stop when the user leaves the page (the hash changes).
import { ApiFailure } from './api.ts';
import type { Session } from './context.ts';

/** About 5 s in all: much longer than the operator needs, short enough to give up on a write that changed nothing. */
const TRIES = 10;
const PAUSE_MS = 500;

const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));

/**
 * Announces `done`, then reads until the result differs from `before` (what the page showed
 * before the write, compared as JSON) and returns the last read: the change, or after ~5 s
 * whatever the gateway serves (an edit that changed nothing never differs). Only if a second read
 * is needed does the status add that it is waiting, so standalone mode says nothing more.
 */
export async function readAfterWrite<T>(
  session: Pick<Session, 'announce'>,
  done: string,
  before: unknown,
  read: () => Promise<T>,
): Promise<T> {
  const page = location.hash;
  const shown = JSON.stringify(before);
  session.announce(done);
  let latest = await read();
  if (JSON.stringify(latest) !== shown) return latest;
  session.announce(`${done} Waiting for the change to be published…`);
  for (let tries = 1; tries < TRIES && JSON.stringify(latest) === shown && location.hash === page; tries++) {
    await pause();
    latest = await read();
  }
  // A message belongs to the page it was said on: do not put it back on another one.
  if (location.hash === page) session.announce(done);
  return latest;
}

/**
 * Reads one resource, reading again on 404 for ~5 s before giving up: it may have been written
 * a moment ago and not be published yet (the "Created …" link on the Users page).
 */
export async function readUntilFound<T>(read: () => Promise<T>): Promise<T> {
  const page = location.hash;
  for (let tries = 1; ; tries++) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof ApiFailure && error.status === 404) || tries >= TRIES || location.hash !== page) throw error;
    }
    await pause();
  }
}

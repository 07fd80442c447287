// How much of a request body is taken in one turn of the event loop. A client on a fast link
// fills the socket faster than the gateway reads it, and Node then hands over dozens of chunks in
// one turn: copying 8 MB of an upload into fresh memory (its pages faulted in one by one) held the
// loop 65 ms. Past TURN_BYTES in one turn the body is paused until the next, so other requests
// are answered in between; the kernel's buffers hold the rest meanwhile.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { BodyDeadlines } from './body-deadlines.ts';
import type { BodyExpiry } from '../api/body-faults.ts';

/** Bytes of one body taken in one turn of the event loop. */
export const TURN_BYTES = 1024 * 1024;

/** Counts a body's chunks and pauses it for a turn past TURN_BYTES; returns the function to call with each chunk. */
export function paced(payload: Readable): (chunk: Buffer) => void {
  let taken = 0;
  let paused = false;
  const resume = () => {
    paused = false;
    taken = 0;
    if (!payload.destroyed) payload.resume();
  };
  return (chunk) => {
    taken += chunk.length;
    if (taken < TURN_BYTES || paused) return;
    paused = true;
    payload.pause();
    setImmediate(resume);
  };
}

/** A body being read: each chunk told, and the end. */
export interface Arrival {
  chunk(chunk: Buffer): void;
  stop(): void;
}

/** A body already in memory whole: nothing to time or pace (most requests, by the time they are parsed). */
const ARRIVED: Arrival = { chunk() {}, stop() {} };

/**
 * Follows a body as it arrives: its time (body-deadlines.ts, `expired` past it) and its pace. A
 * body the HTTP parser already read whole is neither: what costs a request nothing stays so.
 */
export function arrival(payload: IncomingMessage, deadlines: BodyDeadlines, expired: (why: BodyExpiry, ms: number) => void): Arrival {
  if (payload.complete) return ARRIVED;
  const watch = deadlines.watch(expired);
  const pace = paced(payload);
  return {
    chunk(chunk) {
      watch.received(chunk.length);
      pace(chunk);
    },
    stop: () => watch.stop(),
  };
}

// How long the gateway waits on a backend, step by step: to connect, for the answer's first byte
// (its response headers), and between two bytes of the answer (two streamed chunks). Each comes
// from the provider's own setting, else the process's (docs/failure-handling.md).
import type { ProviderSpec } from '../../core/resources/provider.ts';

export interface UpstreamTimeouts {
  readonly connectMs: number;
  readonly firstByteMs: number;
  readonly betweenChunksMs: number;
}

/** The process's defaults, in seconds (--connect-timeout, --first-byte-timeout, --chunk-timeout). */
export interface TimeoutDefaults {
  readonly connectSeconds: number;
  readonly firstByteSeconds: number;
  readonly betweenChunksSeconds: number;
}

export const DEFAULT_TIMEOUTS: TimeoutDefaults = { connectSeconds: 10, firstByteSeconds: 60, betweenChunksSeconds: 60 };

/** A provider's timeouts: `timeouts.*`, else its `timeout` (first byte and between chunks), else the defaults. */
export function timeoutsOf(provider: ProviderSpec, defaults: TimeoutDefaults): UpstreamTimeouts {
  const own = provider.timeouts;
  const ms = (seconds: number) => Math.round(seconds * 1000);
  return {
    connectMs: ms(own?.connect_seconds ?? defaults.connectSeconds),
    firstByteMs: ms(own?.first_byte_seconds ?? provider.timeout ?? defaults.firstByteSeconds),
    betweenChunksMs: ms(own?.between_chunks_seconds ?? provider.timeout ?? defaults.betweenChunksSeconds),
  };
}

/** The timeouts of an attempt that must be over by `msLeft` (the request's deadline): no step may wait longer. */
export function withinDeadline(timeouts: UpstreamTimeouts, msLeft: number): UpstreamTimeouts {
  const left = Math.max(1, Math.floor(msLeft));
  if (timeouts.connectMs <= left && timeouts.firstByteMs <= left) return timeouts;
  return { ...timeouts, connectMs: Math.min(timeouts.connectMs, left), firstByteMs: Math.min(timeouts.firstByteMs, left) };
}

// One scrape of an engine's /metrics: a GET under its base URL, its body read as it arrives, up
// to a size bound, by a scanner of vLLM's metrics (vllm-metrics.ts over sample-scanner.ts) that
// parses only the lines routing reads and stops reading once it has them. Whatever goes wrong
// (refused, an error status, a body past the bound before what is read came, bad text, the
// caller's abort on its timeout) is an outcome, never a throw: the scraping loop goes on. Its
// deadline is the caller's signal (scraped-metrics-source.ts owns the timer), so that a stopped
// source leaves no timer behind.
import type { EngineLoad } from '../../../core/store/engine-signals.ts';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import type { ScanCount, ScanLimits } from './sample-scanner.ts';
import { vllmLoad, vllmScanner } from './vllm-metrics.ts';

/** What a scrape gave, and what it took in of the body (none when no 2xx body was read). */
export type ScrapeOutcome = ({ readonly ok: true; readonly load: EngineLoad } | { readonly ok: false; readonly error: string }) & {
  readonly scanned?: ScanCount;
};

/**
 * Bytes of a /metrics text read at most: a vLLM's, histograms and all, is some tens of kB a
 * model, and what routing reads comes near its start. A text whose series read are not all in
 * by then is refused; one whose are stops being read there.
 */
export const MAX_METRICS_BYTES = 1024 * 1024;

export interface ScrapeOptions {
  /** Aborts the scrape (its deadline, or the source stopping); the reason becomes the error. */
  readonly signal: AbortSignal;
  readonly maxBytes?: number;
  /** Bounds of the scanner's work (sample-scanner.ts). */
  readonly limits?: ScanLimits;
}

/** The URL of the metrics under a base URL, which may carry a path of its own (a proxy's prefix). */
export function metricsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/metrics`;
}

/**
 * The request of the metrics: credentials in the base URL (`http://user:pass@host`) go as Basic
 * authorization, since fetch refuses a URL that holds them (and would name them in its error).
 */
function metricsRequest(baseUrl: string): { url: string; headers: Record<string, string> } {
  const url = new URL(metricsUrl(baseUrl));
  const headers: Record<string, string> = { accept: 'text/plain' };
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return { url: url.href, headers };
}

/**
 * Scrapes `baseUrl`'s /metrics; never throws. With undici's request rather than fetch: fetch's
 * WHATWG streams and response objects made one scrape of a 2 kB text cost ~470 µs of CPU, which
 * prefix_affinity pays a few times a second per engine (bench --engines-cost, 2026-11-27). Redirects
 * are not followed (one is an error status here).
 */
export async function scrapeMetrics(baseUrl: string, options: ScrapeOptions): Promise<ScrapeOutcome> {
  const maxBytes = options.maxBytes ?? MAX_METRICS_BYTES;
  try {
    const { url, headers } = metricsRequest(baseUrl);
    const response = await request(url, { signal: options.signal, headers });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      return { ok: false, error: `/metrics answered ${response.statusCode}` };
    }
    return await readLoad(response.body, maxBytes, options.limits);
  } catch (error) {
    const reason = options.signal.aborted ? options.signal.reason : error;
    return { ok: false, error: reason instanceof Error ? reason.message : String(reason) };
  }
}

/**
 * The load in the body, read as it arrives: no more of it than `maxBytes`, and none once the
 * scanner has what it reads (or refuses the text); the rest is not read.
 */
async function readLoad(body: Readable, maxBytes: number, limits: ScanLimits | undefined): Promise<ScrapeOutcome> {
  const scanner = vllmScanner(limits);
  // The body is let go unread past what is wanted: undici's report of the cut is expected.
  body.on('error', () => {});
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = maxBytes - bytes;
    bytes += chunk.length;
    scanner.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    if (scanner.done) break;
    if (bytes > maxBytes) return { ok: false, error: `/metrics answered more than ${maxBytes} bytes`, scanned: stop(body, scanner.count) };
  }
  const read = vllmLoad(scanner.end());
  const scanned = stop(body, scanner.count);
  return read.ok ? { ok: true, load: read.load, scanned } : { ok: false, error: `bad /metrics text: ${read.error}`, scanned };
}

/** The body is not read further. */
function stop(body: Readable, scanned: ScanCount): ScanCount {
  if (!body.readableEnded) body.destroy();
  return scanned;
}

/** Stops reading a body not wanted; undici's report of it being cut short is expected, not an error. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

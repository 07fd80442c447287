// One scrape of an engine's /metrics: a GET under its base URL, read up to a size bound, then
// read as vLLM's metrics (vllm-metrics.ts). Whatever goes wrong (refused, an error status, a
// body past the bound, bad text, the caller's abort on its timeout) is an outcome, never a throw:
// the scraping loop goes on. Its deadline is the caller's signal (scraped-metrics-source.ts owns
// the timer), so that a stopped source leaves no timer behind.
import type { EngineLoad } from '../../../core/store/engine-signals.ts';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import { readVllmMetrics } from './vllm-metrics.ts';

export type ScrapeOutcome = { readonly ok: true; readonly load: EngineLoad } | { readonly ok: false; readonly error: string };

/** A /metrics text larger than this is refused: a vLLM's, histograms and all, is some tens of kB a model. */
export const MAX_METRICS_BYTES = 1024 * 1024;

export interface ScrapeOptions {
  /** Aborts the scrape (its deadline, or the source stopping); the reason becomes the error. */
  readonly signal: AbortSignal;
  readonly maxBytes?: number;
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
    const text = await readBounded(response.headers['content-length'], response.body, maxBytes);
    if (text === undefined) return { ok: false, error: `/metrics answered more than ${maxBytes} bytes` };
    const read = readVllmMetrics(text);
    return read.ok ? { ok: true, load: read.load } : { ok: false, error: `bad /metrics text: ${read.error}` };
  } catch (error) {
    const reason = options.signal.aborted ? options.signal.reason : error;
    return { ok: false, error: reason instanceof Error ? reason.message : String(reason) };
  }
}

/** The body as text, or undefined once it passes `maxBytes` (the rest is not read). */
async function readBounded(declaredLength: string | string[] | undefined, body: Readable, maxBytes: number): Promise<string | undefined> {
  const declared = Number(declaredLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(body);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      discard(body);
      return undefined;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, bytes).toString('utf8');
}

/** Stops reading a body not wanted; undici's report of it being cut short is expected, not an error. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

// Small helpers shared by the HTTP integration tests: reading raw answers, checking OpenAI's
// error envelope, the spec's cost formula computed independently of the gateway, Prometheus
// text, and bounded waiting.
import assert from 'node:assert/strict';
import { Agent, fetch as undiciFetch } from 'undici';
import type { TestGateway } from '../../support/gateway.ts';
import { poll } from '../../support/eventually.ts';
import { SETTLE_MS } from '../../support/patience.ts';

export const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Every raw request of these tests goes through here. It authenticates as the test gateway's
 * admin unless the request brings its own Authorization header.
 */
export function gatewayFetch(
  gw: TestGateway,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(gw.url + path, { ...init, headers: { ...gw.auth, ...init.headers } });
}

/**
 * A client with connections of its own, for requests a test aborts. Aborting a request on a
 * pooled keep-alive connection of the shared fetch client can leave that pool holding a fresh
 * connection that never carries a request, which the gateway's graceful close then waits on;
 * closing this client's own connections after the test leaves nothing behind.
 */
export function ownClient(gw: TestGateway) {
  const agent = new Agent();
  return {
    fetch: (path: string, init: { method: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal }) =>
      undiciFetch(gw.url + path, { ...init, headers: { ...gw.auth, ...init.headers }, dispatcher: agent }),
    close: () => agent.destroy(),
  };
}

/** Sends a request and returns the body as the exact text the gateway wrote. */
export async function send(
  gw: TestGateway,
  method: string,
  path: string,
  body?: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const response = await gatewayFetch(gw, path, { method, headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** POSTs a JSON value and returns the raw text (for assertions on how numbers are printed). */
export function postJson(gw: TestGateway, path: string, body: unknown): Promise<RawAnswer> {
  return send(gw, 'POST', path, JSON.stringify(body), JSON_HEADERS);
}

export { assertError, assertNoInternals, type ExpectedError } from '../../support/api-errors.ts';

/**
 * The spec's cost formula (section 8), in exact integer arithmetic:
 *   round(prompt / 1e6 * promptPrice + completion / 1e6 * completionPrice, 6 decimals), half up.
 * Prices are decimal strings per million tokens with at most 6 decimals. Returns the decimal text.
 */
export function exactCost(promptTokens: number, completionTokens: number, promptPrice: string, completionPrice: string): string {
  // A price per million tokens in 10^-6 units is the price of one token in 10^-12 units.
  const picos = BigInt(promptTokens) * toMicros(promptPrice) + BigInt(completionTokens) * toMicros(completionPrice);
  const micros = (picos + 500_000n) / 1_000_000n;
  const digits = micros.toString().padStart(7, '0');
  const whole = digits.slice(0, -6);
  const fraction = digits.slice(-6).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

function toMicros(price: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(price);
  assert.ok(match, `test price ${price} must be a decimal with at most 6 decimals`);
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}

/** The `"cost":...` number exactly as the gateway printed it in a JSON text. */
export function printedCosts(text: string): string[] {
  return [...text.matchAll(/"cost":(-?[0-9.eE+-]+)/g)].map((m) => m[1]!);
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition into samples. */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]!] = label[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels`; undefined if none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `several samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** Polls `read` until `done` holds for its value, for at most `timeoutMs`; returns the last value (the caller asserts on it). */
export async function waitUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = SETTLE_MS): Promise<T> {
  const { value, error } = await poll(read, done, { timeoutMs });
  if (value === undefined && error !== undefined) throw error;
  return value as T;
}

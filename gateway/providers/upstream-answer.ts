// Reading what a backend answered: whether its status is a success, its headers as undici hands
// them over, the length it declared, and a whole body as JSON. Shared by the HTTP client
// (upstream-http.ts) and the classification of its failures (upstream-failures.ts).
import { UpstreamError } from './upstream-error.ts';

/** An answer's headers, as undici hands them over. */
export type AnswerHeaders = Record<string, string | string[] | undefined>;

export function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError('protocol', 'the backend answered with a body that is not JSON');
  }
}

export const isOk = (status: number) => status >= 200 && status < 300;

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The body's length the backend declared, or 0 when it declared none. */
export function declaredLength(headers: AnswerHeaders): number {
  const length = Number(headerText(headers['content-length']));
  return Number.isFinite(length) ? length : 0;
}

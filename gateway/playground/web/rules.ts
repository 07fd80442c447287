// Client-side checks that mirror the gateway's zod schemas (core/resources/*.ts), so most
// mistakes are caught before sending; the server stays the judge and its 400s are shown too.
// Each rule returns a problem in words, or null when the value is fine.

export type Rule = (value: string) => string | null;

export const required: Rule = (v) => (v.trim() === '' ? 'Required.' : null);

/** Router names and aliases (ModelName). */
export const modelName: Rule = (v) => {
  if (v.length > 128) return 'At most 128 characters.';
  return /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/.test(v) ? null : 'Start with a letter or digit; use only letters, digits and . _ : / @ + -';
};

/** User and provider ids (ResourceId): they also name Kubernetes objects. */
export const resourceId: Rule = (v) => {
  if (v.length > 63) return 'At most 63 characters.';
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(v)
    ? null
    : 'Use lowercase letters, digits and -, starting and ending with a letter or digit.';
};

/** A decimal amount ≥ 0 with at most `places` decimals (money: 6, prices: 9). */
export const decimal =
  (places: number): Rule =>
  (v) =>
    new RegExp(`^\\d+(\\.\\d{1,${places}})?$`).test(v.trim()) ? null : `A number of 0 or more, with at most ${places} decimals.`;

export const integer =
  (min: number, max: number): Rule =>
  (v) => {
    const n = Number(v);
    return /^-?\d+$/.test(v.trim()) && n >= min && n <= max ? null : `A whole number from ${min} to ${max.toLocaleString('en-US')}.`;
  };

export const number =
  (min: number, max: number, { exclusiveMin = false } = {}): Rule =>
  (v) => {
    const n = Number(v);
    const ok = v.trim() !== '' && Number.isFinite(n) && (exclusiveMin ? n > min : n >= min) && n <= max;
    return ok ? null : `A number ${exclusiveMin ? 'above' : 'from'} ${min}${exclusiveMin ? ' and at most' : ' to'} ${max}.`;
  };

/** A backend's base address (BaseUrl): http(s), without the /v1 the gateway adds. */
export const baseUrl: Rule = (v) => {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return 'An absolute address such as http://vllm:8000.';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Must start with http:// or https://.';
  return /\/v1\/?$/.test(v) ? 'Leave out /v1: the gateway adds the API path.' : null;
};

export const futureDate: Rule = (v) => (Date.parse(`${v}T00:00:00Z`) > Date.now() ? null : 'A date in the future.');

/** Applies `rules` in order to a value; an empty optional value passes. */
export function check(value: string, rules: readonly Rule[], optional = false): string | null {
  if (optional && value.trim() === '') return null;
  for (const rule of rules) {
    const problem = rule(value);
    if (problem) return problem;
  }
  return null;
}

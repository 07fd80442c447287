// How numbers are shown. Money keeps the 6 decimals of a cost (spec 8) without trailing zeros;
// energy and emissions are tiny per request, so they get significant digits, not decimals.

export function money(value: number | null | undefined): string {
  if (value === null || value === undefined) return 'unlimited';
  return trimZeros(value.toFixed(6));
}

/** A price per one million tokens, up to 9 decimals as the API accepts. */
export function price(value: number): string {
  return trimZeros(value.toFixed(9));
}

export function kwh(value: number): string {
  return `${small(value)} kWh`;
}

export function co2(value: number): string {
  return `${small(value)} kgCO2eq`;
}

export function tokens(value: number): string {
  return value.toLocaleString('en-US');
}

/** ` (N cached)` after a prompt's tokens when the backend served N of them from its prompt cache; nothing when none. */
export function cachedNote(cached: number): string {
  return cached > 0 ? ` (${tokens(cached)} cached)` : '';
}

export function milliseconds(value: number | null): string {
  return value === null ? '–' : `${Math.round(value).toLocaleString('en-US')} ms`;
}

/** An ISO instant as `2025-11-22 00:38:27 UTC`: the gateway's periods and days are UTC. */
export function utcTime(iso: string | null): string {
  if (iso === null) return '–';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export function utcDate(iso: string | null): string {
  return iso === null ? '–' : iso.slice(0, 10);
}

function small(value: number): string {
  if (value === 0) return '0';
  return Math.abs(value) >= 0.001 ? trimZeros(value.toFixed(6)) : value.toExponential(2);
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

// Exact decimal <-> scaled integer conversion. Money never passes through float arithmetic:
// prices are parsed from their decimal text into integers of 10^-scale units.

export type DecimalParse = { ok: true; value: bigint; canonical: string } | { ok: false; reason: string };

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Parses "0.15", "12", "1e-7" into an integer count of 10^-scale units, exactly. */
export function parseDecimal(text: string, scale: number): DecimalParse {
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, reason: `must be a decimal number, got "${text}"` };
  const [, sign = '', whole = '0', fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  // Shift the decimal point by the exponent, then by the scale.
  let digits = whole + fraction;
  let pointAt = whole.length + exponent; // position of the decimal point inside `digits`
  if (pointAt < 0) {
    digits = '0'.repeat(-pointAt) + digits;
    pointAt = 0;
  }
  if (pointAt > digits.length) digits += '0'.repeat(pointAt - digits.length);
  const intPart = digits.slice(0, pointAt) || '0';
  const fracPart = digits.slice(pointAt).replace(/0+$/, '');
  if (fracPart.length > scale) {
    return { ok: false, reason: `must have at most ${scale} decimal places, got "${text}"` };
  }
  if (intPart.replace(/^0+/, '').length > 15) return { ok: false, reason: `is too large, got "${text}"` };
  const magnitude = BigInt(intPart) * 10n ** BigInt(scale) + BigInt((fracPart || '0').padEnd(scale, '0'));
  const value = sign === '-' ? -magnitude : magnitude;
  return { ok: true, value, canonical: formatScaled(value, scale) };
}

/** Formats an integer of 10^-scale units as the shortest exact decimal string. */
export function formatScaled(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

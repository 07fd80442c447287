// Exact decimal text <-> scaled integers: the only way money enters the gateway, so no float
// residue can reach a cost.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatScaled, parseDecimal } from '../../../../core/money/decimal.ts';

describe('parseDecimal', () => {
  const accepted: { text: string; scale: number; value: bigint; canonical: string }[] = [
    { text: '0', scale: 9, value: 0n, canonical: '0' },
    { text: '12', scale: 9, value: 12_000_000_000n, canonical: '12' },
    { text: '0.15', scale: 9, value: 150_000_000n, canonical: '0.15' },
    { text: '0.1', scale: 9, value: 100_000_000n, canonical: '0.1' },
    { text: '0.60', scale: 9, value: 600_000_000n, canonical: '0.6' },
    { text: '007.500', scale: 9, value: 7_500_000_000n, canonical: '7.5' },
    { text: '0.000000001', scale: 9, value: 1n, canonical: '0.000000001' },
    { text: '1.000000000000', scale: 9, value: 1_000_000_000n, canonical: '1' }, // trailing zeros beyond the scale are harmless
    { text: '1e-7', scale: 9, value: 100n, canonical: '0.0000001' },
    { text: '1E-7', scale: 9, value: 100n, canonical: '0.0000001' },
    { text: '2.5e-9', scale: 10, value: 25n, canonical: '0.0000000025' },
    { text: '1.5e3', scale: 9, value: 1_500_000_000_000n, canonical: '1500' },
    { text: '1e+2', scale: 6, value: 100_000_000n, canonical: '100' },
    { text: '-0.5', scale: 9, value: -500_000_000n, canonical: '-0.5' },
    { text: '999999999999999', scale: 9, value: 999_999_999_999_999_000_000_000n, canonical: '999999999999999' },
  ];
  for (const { text, scale, value, canonical } of accepted) {
    test(`"${text}" at scale ${scale} is ${value} units, written "${canonical}"`, () => {
      assert.deepEqual(parseDecimal(text, scale), { ok: true, value, canonical });
    });
  }

  const rejected: { text: string; scale: number; reason: string }[] = [
    { text: 'abc', scale: 9, reason: 'must be a decimal number, got "abc"' },
    { text: '', scale: 9, reason: 'must be a decimal number, got ""' },
    { text: '.5', scale: 9, reason: 'must be a decimal number, got ".5"' },
    { text: '5.', scale: 9, reason: 'must be a decimal number, got "5."' },
    { text: '1,5', scale: 9, reason: 'must be a decimal number, got "1,5"' },
    { text: 'NaN', scale: 9, reason: 'must be a decimal number, got "NaN"' },
    { text: 'Infinity', scale: 9, reason: 'must be a decimal number, got "Infinity"' },
    { text: '0.0000000001', scale: 9, reason: 'must have at most 9 decimal places, got "0.0000000001"' },
    { text: '1e-10', scale: 9, reason: 'must have at most 9 decimal places, got "1e-10"' },
    { text: '0.1234567', scale: 6, reason: 'must have at most 6 decimal places, got "0.1234567"' },
    { text: '1000000000000000', scale: 9, reason: 'is too large, got "1000000000000000"' },
    { text: '1e21', scale: 9, reason: 'is too large, got "1e21"' },
  ];
  for (const { text, scale, reason } of rejected) {
    test(`"${text}" at scale ${scale} is rejected: ${reason}`, () => {
      assert.deepEqual(parseDecimal(text, scale), { ok: false, reason });
    });
  }
});

describe('formatScaled', () => {
  const cases: { value: bigint; scale: number; text: string }[] = [
    { value: 0n, scale: 6, text: '0' },
    { value: 1n, scale: 6, text: '0.000001' },
    { value: 300_000n, scale: 6, text: '0.3' },
    { value: 1_234_567n, scale: 6, text: '1.234567' },
    { value: 20_000_000_000n, scale: 6, text: '20000' },
    { value: -1_500_000n, scale: 6, text: '-1.5' },
    { value: 42n, scale: 0, text: '42' },
  ];
  for (const { value, scale, text } of cases) {
    test(`${value} units at scale ${scale} print as "${text}"`, () => {
      assert.equal(formatScaled(value, scale), text);
    });
  }

  test('formatting then parsing gives back the same units', () => {
    for (const value of [0n, 1n, 7n, 123_456_789n, 10n ** 20n, -999n]) {
      const parsed = parseDecimal(formatScaled(value, 9), 9);
      assert.deepEqual(parsed.ok && parsed.value, value);
    }
  });
});

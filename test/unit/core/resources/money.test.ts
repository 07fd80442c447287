// Money, the amount of a budget (users, teams, keys; the config file, the admin API and the
// operator all parse it): a string is a plain decimal, as the docs and the CRDs' MoneyString say
// (digits, then a point and at most 6 decimals; no exponent, spaces, sign or leading zeros); a
// JSON number is taken exactly or refused, never rounded. Each refusal says what is wrong.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Money } from '../../../../core/resources/user.ts';
import { MoneyString } from '../../../../core/resources/kubernetes/kube-fields.ts';

function refusal(value: unknown): string {
  const parsed = Money.safeParse(value);
  assert.equal(parsed.success, false, `${JSON.stringify(value)} was accepted as ${JSON.stringify(parsed.data)}`);
  assert.equal(parsed.error!.issues.length, 1);
  return parsed.error!.issues[0]!.message;
}

const PLAIN =
  /^amount must be a decimal number written as digits, with a point and at most 6 decimals, such as "25\.50" \(no exponent, spaces or sign\), got /;

describe('Money', () => {
  const accepted: [string | number, string][] = [
    ['0', '0'],
    ['5', '5'],
    ['25.50', '25.5'],
    ['0.000001', '0.000001'],
    ['999999999999999.999999', '999999999999999.999999'],
    [0, '0'],
    [12.5, '12.5'],
    [0.000001, '0.000001'],
    [1e15 - 1, '999999999999999'],
  ];
  for (const [input, output] of accepted) {
    test(`${JSON.stringify(input)} is the amount ${output}`, () => {
      assert.equal(Money.parse(input), output);
    });
  }

  const notPlain = [
    '1e3',
    '1E3',
    '1e-3',
    ' 5 ',
    '5 ',
    ' 5',
    '+5',
    '0x10',
    '1_000',
    '1,5',
    '.5',
    '5.',
    '007',
    '00.5',
    '',
    'NaN',
    'Infinity',
    '٥',
  ];
  for (const input of notPlain) {
    test(`the string ${JSON.stringify(input)} is not a plain decimal, and is refused saying so`, () => {
      const message = refusal(input);
      assert.match(message, PLAIN);
      assert.ok(message.endsWith(`got ${JSON.stringify(input)}`), message);
    });
  }

  test('a negative amount, string or number, is refused as negative', () => {
    assert.equal(refusal('-5'), 'amount must not be negative');
    assert.equal(refusal('-0.5'), 'amount must not be negative');
    assert.equal(refusal(-1), 'amount must not be negative');
  });

  test('too many decimals and too many digits keep their own messages', () => {
    assert.equal(refusal('1.0000001'), 'amount must have at most 6 decimal places, got "1.0000001"');
    assert.equal(refusal('1000000000000000'), 'amount is too large, got "1000000000000000"');
  });

  test('a number written with an exponent (below 1e-6, from 1e21) is exact, so refused as what it is', () => {
    assert.equal(refusal(1e-7), 'amount must have at most 6 decimal places, got "1e-7"');
    assert.equal(refusal(1e21), 'amount is too large, got "1e+21"');
    assert.equal(refusal(0.1 + 0.2), 'amount must have at most 6 decimal places, got "0.30000000000000004"');
  });

  test("every string Money takes, the CRDs' MoneyString takes, and the other way round", () => {
    const strings = [
      ...notPlain,
      ...accepted.filter(([i]) => typeof i === 'string').map(([i]) => i as string),
      '-5',
      '1.0000001',
      '1000000000000000',
    ];
    for (const input of strings)
      assert.equal(Money.safeParse(input).success, MoneyString.safeParse(input).success, `${JSON.stringify(input)}`);
  });
});

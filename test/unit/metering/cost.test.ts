// The spec's cost formula (section 8), computed exactly:
//   cost = round(prompt_tokens / 1e6 * prompt_price + completion_tokens / 1e6 * completion_price, 6)
// Prices come in as the config file and the admin API give them (numbers, decimal strings,
// exponent form), go through the router schema, and the cost is checked to the last micro-unit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RouterCosts } from '../../../core/resources/router.ts';
import { COST_SCALE, PRICE_SCALE, costMicros, microsToDecimal, microsToNumber, pricesFrom } from '../../../gateway/metering/cost.ts';

type Price = number | string;

/** The cost of a request as a router with these prices computes it, as exact decimal text. */
function cost(prices: { prompt: Price; completion: Price }, promptTokens: number, completionTokens: number): string {
  const costs = RouterCosts.parse({ prompt_tokens: prices.prompt, completion_tokens: prices.completion });
  return microsToDecimal(costMicros(pricesFrom(costs), promptTokens, completionTokens));
}

interface Case {
  name: string;
  prompt: Price;
  completion: Price;
  promptTokens: number;
  completionTokens: number;
  expected: string;
}

describe('cost of a request', () => {
  const cases: Case[] = [
    { name: 'a typical chat request', prompt: 0.15, completion: 0.6, promptTokens: 1000, completionTokens: 500, expected: '0.00045' },
    {
      name: 'exactly one million tokens each way',
      prompt: 2.5,
      completion: 10,
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      expected: '12.5',
    },
    {
      name: 'rounded to 6 decimals (0.0005253 -> 0.000525)',
      prompt: 0.15,
      completion: 0.6,
      promptTokens: 1234,
      completionTokens: 567,
      expected: '0.000525',
    },
    { name: 'zero prices cost nothing', prompt: 0, completion: 0, promptTokens: 123_456, completionTokens: 7_890, expected: '0' },
    {
      name: 'a zero completion price leaves the prompt part',
      prompt: 1,
      completion: 0,
      promptTokens: 2000,
      completionTokens: 999_999,
      expected: '0.002',
    },
    {
      name: 'a zero prompt price leaves the completion part',
      prompt: 0,
      completion: 3,
      promptTokens: 999_999,
      completionTokens: 2000,
      expected: '0.006',
    },
    { name: 'no tokens cost nothing', prompt: 5, completion: 15, promptTokens: 0, completionTokens: 0, expected: '0' },
    {
      name: '10 million tokens at price 1000, both ways',
      prompt: 1000,
      completion: 1000,
      promptTokens: 10_000_000,
      completionTokens: 10_000_000,
      expected: '20000',
    },
    {
      name: '10 million tokens at the finest price (9 decimals)',
      prompt: 0.000000001,
      completion: 0,
      promptTokens: 10_000_000,
      completionTokens: 0,
      expected: '0',
    },
    {
      name: 'a billion tokens at a price with 9 decimals',
      prompt: '1.234567891',
      completion: 0,
      promptTokens: 1_000_000_000,
      completionTokens: 0,
      expected: '1234.567891',
    },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.promptTokens} x ${c.prompt} + ${c.completionTokens} x ${c.completion} per million = ${c.expected}`, () => {
      assert.equal(cost({ prompt: c.prompt, completion: c.completion }, c.promptTokens, c.completionTokens), c.expected);
    });
  }
});

describe('no float residue', () => {
  // Each case shows what naive double arithmetic gives, to make plain why the gateway avoids it.
  const cases: (Case & { naive: number })[] = [
    {
      name: '0.1 + 0.2',
      prompt: 0.1,
      completion: 0.2,
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      expected: '0.3',
      naive: 0.30000000000000004,
    },
    {
      name: '1.1 + 2.2',
      prompt: 1.1,
      completion: 2.2,
      promptTokens: 1_000_000,
      completionTokens: 1_000_000,
      expected: '3.3',
      naive: 3.3000000000000003,
    },
    {
      name: '1000 tokens at 1.005',
      prompt: 1.005,
      completion: 0,
      promptTokens: 1000,
      completionTokens: 0,
      expected: '0.001005',
      naive: 0.0010049999999999998,
    },
  ];
  for (const c of cases) {
    test(`${c.name} is exactly ${c.expected} (naive floats give ${c.naive})`, () => {
      assert.equal((c.promptTokens / 1e6) * Number(c.prompt) + (c.completionTokens / 1e6) * Number(c.completion), c.naive);
      assert.equal(cost({ prompt: c.prompt, completion: c.completion }, c.promptTokens, c.completionTokens), c.expected);
    });
  }
});

describe('rounding half-up at the 6th decimal', () => {
  // Every exact value here ends in 5 at the 7th decimal. Naive Math.round(x * 1e6) / 1e6 rounds
  // most of them down, because the double nearest to the exact value lies just below it.
  const cases: {
    prompt: Price;
    completion: Price;
    promptTokens: number;
    completionTokens: number;
    exact: string;
    expected: string;
    naive: number;
  }[] = [
    { prompt: 0.5, completion: 0, promptTokens: 1, completionTokens: 0, exact: '0.0000005', expected: '0.000001', naive: 0.000001 },
    { prompt: 0, completion: 0.5, promptTokens: 0, completionTokens: 1, exact: '0.0000005', expected: '0.000001', naive: 0.000001 },
    { prompt: 0.1, completion: 0, promptTokens: 75, completionTokens: 0, exact: '0.0000075', expected: '0.000008', naive: 0.000007 },
    { prompt: 0.7, completion: 0, promptTokens: 35, completionTokens: 0, exact: '0.0000245', expected: '0.000025', naive: 0.000024 },
    { prompt: 2.5, completion: 0, promptTokens: 11, completionTokens: 0, exact: '0.0000275', expected: '0.000028', naive: 0.000027 },
    { prompt: 1.005, completion: 0, promptTokens: 100, completionTokens: 0, exact: '0.0001005', expected: '0.000101', naive: 0.0001 },
    { prompt: 0, completion: 2.675, promptTokens: 0, completionTokens: 140, exact: '0.0003745', expected: '0.000375', naive: 0.000374 },
    { prompt: 0.1, completion: 0.2, promptTokens: 3, completionTokens: 1, exact: '0.0000005', expected: '0.000001', naive: 0.000001 },
  ];
  for (const c of cases) {
    test(`${c.promptTokens} x ${c.prompt} + ${c.completionTokens} x ${c.completion} per million = ${c.exact}, rounds up to ${c.expected}`, () => {
      const naive = Math.round(((c.promptTokens / 1e6) * Number(c.prompt) + (c.completionTokens / 1e6) * Number(c.completion)) * 1e6) / 1e6;
      assert.equal(naive, c.naive);
      assert.equal(cost(c, c.promptTokens, c.completionTokens), c.expected);
    });
  }

  test('just under one half rounds down', () => {
    assert.equal(cost({ prompt: '0.499999999', completion: 0 }, 1, 0), '0');
    assert.equal(cost({ prompt: '0.000000001', completion: '0.499999999' }, 1, 1), '0.000001');
  });
});

describe('the forms a price may take', () => {
  // Whatever its form, a price is kept as its exact decimal text; the cost never sees a double.
  const forms: { form: string; price: Price; canonical: string }[] = [
    { form: 'a number', price: 0.15, canonical: '0.15' },
    { form: 'a decimal string', price: '0.15', canonical: '0.15' },
    { form: 'a decimal string with trailing zeros', price: '0.150', canonical: '0.15' },
    { form: 'a decimal string with spaces around it', price: ' 0.15 ', canonical: '0.15' },
    { form: 'an integer', price: 3, canonical: '3' },
    { form: 'a number in exponent form', price: 1e-7, canonical: '0.0000001' },
    { form: 'a string in exponent form', price: '1e-7', canonical: '0.0000001' },
    { form: 'a string with a positive exponent', price: '1.5e3', canonical: '1500' },
  ];
  for (const { form, price, canonical } of forms) {
    test(`${form} (${JSON.stringify(price)}) is kept as the exact decimal "${canonical}"`, () => {
      assert.deepEqual(RouterCosts.parse({ prompt_tokens: price, completion_tokens: price, audio_minutes: price }), {
        prompt_tokens: canonical,
        completion_tokens: canonical,
        audio_minutes: canonical,
      });
    });
  }

  test('1e-7 per million tokens costs 0.000001 for ten million tokens and 1 for 10^13 tokens', () => {
    assert.equal(cost({ prompt: 1e-7, completion: '1e-7' }, 5_000_000, 5_000_000), '0.000001');
    assert.equal(cost({ prompt: 1e-7, completion: 0 }, 10_000_000_000_000, 0), '1');
  });

  test('missing prices default to 0', () => {
    assert.deepEqual(RouterCosts.parse({}), { prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0' });
    assert.deepEqual(RouterCosts.parse({ completion_tokens: 2 }), { prompt_tokens: '0', completion_tokens: '2', audio_minutes: '0' });
  });
});

describe('cost of a transcription: minutes of audio, besides tokens', () => {
  const audioCost = (audioMinutes: Price, audioMs: number, tokens: { prompt?: Price; promptTokens?: number } = {}) => {
    const costs = RouterCosts.parse({ prompt_tokens: tokens.prompt ?? 0, audio_minutes: audioMinutes });
    return microsToDecimal(costMicros(pricesFrom(costs), tokens.promptTokens ?? 0, 0, audioMs));
  };

  test("one minute at OpenAI's whisper-1 price of 0.006 costs 0.006; 3 seconds cost 0.0003", () => {
    assert.equal(audioCost('0.006', 60_000), '0.006');
    assert.equal(audioCost('0.006', 3_000), '0.0003');
  });

  test('the audio is priced to the millisecond and the sum rounded once, half-up', () => {
    // 1 ms at 0.03 a minute is 0.0000005: half a micro-unit, rounded up.
    assert.equal(audioCost('0.03', 1), '0.000001');
    // 1 ms at 0.029999999 a minute is just under half: rounded down.
    assert.equal(audioCost('0.029999999', 1), '0');
    // Half a micro-unit of audio and half of tokens make one, rounded once rather than twice.
    assert.equal(audioCost('0.03', 1, { prompt: '0.5', promptTokens: 1 }), '0.000001');
    assert.equal(audioCost('0.029999999', 1, { prompt: '0.499999999', promptTokens: 1 }), '0.000001');
  });

  test('an hour at 0.006 a minute with 1000 prompt tokens at 2.5 a million costs 0.3625', () => {
    assert.equal(audioCost('0.006', 3_600_000, { prompt: '2.5', promptTokens: 1000 }), '0.3625');
  });

  test('a price per minute is checked as a token price is', () => {
    assert.throws(() => RouterCosts.parse({ audio_minutes: -1 }), /price per minute of audio must not be negative/);
    assert.throws(() => RouterCosts.parse({ audio_minutes: '0.0000000001' }), /price per minute of audio/);
  });
});

describe('rejected prices', () => {
  const cases: { name: string; price: unknown; message: string }[] = [
    { name: 'a negative number', price: -1, message: 'price per million tokens must not be negative' },
    { name: 'a negative string', price: '-0.01', message: 'price per million tokens must not be negative' },
    {
      name: 'more than 9 decimals',
      price: '0.0000000001',
      message: 'price per million tokens must have at most 9 decimal places, got "0.0000000001"',
    },
    {
      name: 'more than 9 decimals as a number',
      price: 1e-10,
      message: 'price per million tokens must have at most 9 decimal places, got "1e-10"',
    },
    { name: 'text', price: 'cheap', message: 'price per million tokens must be a decimal number, got "cheap"' },
    { name: 'a currency sign', price: '$0.15', message: 'price per million tokens must be a decimal number, got "$0.15"' },
    { name: 'an empty string', price: '', message: 'price per million tokens must be a decimal number, got ""' },
    { name: 'an absurd size', price: 1e21, message: 'price per million tokens is too large, got "1e+21"' },
  ];
  for (const { name, price, message } of cases) {
    test(`${name} (${JSON.stringify(price)}): ${message}`, () => {
      const parsed = RouterCosts.safeParse({ prompt_tokens: price });
      assert.equal(parsed.success, false);
      assert.deepEqual(
        parsed.error?.issues.map((i) => ({ path: i.path, message: i.message })),
        [{ path: ['prompt_tokens'], message }],
      );
    });
  }

  for (const value of [Number.NaN, Number.POSITIVE_INFINITY, true, null, [1]]) {
    test(`${String(value)} is not a price`, () => {
      assert.equal(RouterCosts.safeParse({ completion_tokens: value }).success, false);
    });
  }

  test('pricesFrom refuses text the schema would have refused', () => {
    assert.throws(
      () => pricesFrom({ prompt_tokens: '0.0000000001', completion_tokens: '0', audio_minutes: '0' }),
      /price must have at most 9 decimal places/,
    );
  });
});

describe('cost as the client sees it', () => {
  test('costs are held in micro-units and prices in nano-units', () => {
    assert.equal(COST_SCALE, 6);
    assert.equal(PRICE_SCALE, 9);
    assert.deepEqual(pricesFrom({ prompt_tokens: '0.15', completion_tokens: '0.6', audio_minutes: '0.006' }), {
      promptNano: 150_000_000n,
      completionNano: 600_000_000n,
      audioMinuteNano: 6_000_000n,
    });
  });

  const numbers: { micros: bigint; json: string }[] = [
    { micros: 0n, json: '0' },
    { micros: 1n, json: '0.000001' },
    { micros: 300_000n, json: '0.3' },
    { micros: 450n, json: '0.00045' },
    { micros: 3_300_000n, json: '3.3' },
    { micros: 20_000_000_000n, json: '20000' },
    { micros: 123_456_789_012n, json: '123456.789012' },
  ];
  for (const { micros, json } of numbers) {
    test(`${micros} micro-units are the JSON number ${json}`, () => {
      assert.equal(JSON.stringify({ cost: microsToNumber(micros) }), `{"cost":${json}}`);
      assert.equal(microsToDecimal(micros), json);
    });
  }
});

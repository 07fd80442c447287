// Field schemas shared by the resources: what each accepts, how it normalises, and the message
// each refusal carries (the config file and the admin API show these messages as they are).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { z } from 'zod';
import { BaseUrl, ModelName, PricePerMillion, ResourceId, TimeoutSeconds } from '../../../../core/resources/fields.ts';

function messages(schema: z.ZodType, value: unknown): string[] {
  const parsed = schema.safeParse(value);
  assert.equal(parsed.success, false, `${JSON.stringify(value)} was accepted`);
  return parsed.error!.issues.map((issue) => issue.message);
}

describe('BaseUrl', () => {
  const accepted: [string, string][] = [
    ['http://vllm', 'http://vllm'],
    ['https://api.example.com:8443/', 'https://api.example.com:8443'],
    ['http://gateway/prefix/', 'http://gateway/prefix'],
    ['http://host/v1beta', 'http://host/v1beta'],
  ];
  for (const [input, output] of accepted) {
    test(`${input} is accepted as ${output} (trailing slashes dropped)`, () => {
      assert.equal(BaseUrl.parse(input), output);
    });
  }

  const refused: [string, string][] = [
    ['http://vllm:8000/v1', 'must be the base address without /v1 (the gateway adds the API path)'],
    ['http://vllm:8000/v1/', 'must be the base address without /v1 (the gateway adds the API path)'],
    ['ftp://vllm', 'must be an absolute http:// or https:// URL'],
    ['localhost:8000', 'must be an absolute http:// or https:// URL'],
    ['not a url', 'must be an absolute http:// or https:// URL'],
    ['', 'must be an absolute http:// or https:// URL'],
  ];
  for (const [input, message] of refused) {
    test(`${JSON.stringify(input)} is refused once: ${message}`, () => {
      assert.deepEqual(messages(BaseUrl, input), [message]);
    });
  }
});

describe('TimeoutSeconds', () => {
  for (const seconds of [0.001, 0.2, 60, 3600]) {
    test(`${seconds} s is accepted`, () => assert.equal(TimeoutSeconds.parse(seconds), seconds));
  }
  const refused: [unknown, string][] = [
    [0, 'must be more than 0 seconds'],
    [-1, 'must be more than 0 seconds'],
    [3601, 'must be at most 3600 seconds'],
    ['5', 'Invalid input: expected number, received string'],
  ];
  for (const [value, message] of refused) {
    test(`${JSON.stringify(value)} is refused: ${message}`, () => assert.deepEqual(messages(TimeoutSeconds, value), [message]));
  }
});

describe('ModelName', () => {
  for (const name of ['gpt-4o', 'meta-llama/Llama-3.1-8B-Instruct', 'llama3.1:8b', 'org@model+v2', '7b']) {
    test(`${name} is a valid router name or alias`, () => assert.equal(ModelName.parse(name), name));
  }
  const refused: [string, string][] = [
    ['-leading-dash', 'must start with a letter or digit and use only letters, digits and . _ : / @ + -'],
    ['with space', 'must start with a letter or digit and use only letters, digits and . _ : / @ + -'],
    ['x'.repeat(129), 'must be at most 128 characters'],
    ['', 'must not be empty'],
  ];
  for (const [name, message] of refused) {
    test(`${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}...` : name)} is refused: ${message}`, () => {
      assert.equal(messages(ModelName, name)[0], message);
    });
  }
});

describe('ResourceId', () => {
  for (const id of ['a', 'llama-3-1-8b-0', 'x'.repeat(63)]) {
    test(`${id.length > 20 ? `${id.slice(0, 10)}...` : id} is a valid id`, () => assert.equal(ResourceId.parse(id), id));
  }
  for (const id of ['A', '-a', 'a-', 'a_b', 'a.b']) {
    test(`${id} is not`, () => {
      assert.deepEqual(messages(ResourceId, id), ['must be lowercase letters, digits and -, starting and ending with a letter or digit']);
    });
  }
  test('64 characters are too many', () => assert.deepEqual(messages(ResourceId, 'x'.repeat(64)), ['must be at most 63 characters']));
});

describe('PricePerMillion', () => {
  const accepted: [number | string, string][] = [
    [0, '0'],
    [0.15, '0.15'],
    ['0.150', '0.15'],
    [1e-7, '0.0000001'],
    ['1e-7', '0.0000001'],
    ['2.5E2', '250'],
    [' 3 ', '3'],
    ['0.000000001', '0.000000001'],
    ['999999999999999', '999999999999999'],
  ];
  for (const [input, canonical] of accepted) {
    test(`${JSON.stringify(input)} is kept as the exact decimal "${canonical}"`, () =>
      assert.equal(PricePerMillion.parse(input), canonical));
  }
  const refused: [unknown, string][] = [
    [-0.01, 'price per million tokens must not be negative'],
    ['-3', 'price per million tokens must not be negative'],
    ['0.0000000001', 'price per million tokens must have at most 9 decimal places, got "0.0000000001"'],
    [1.0000000001, 'price per million tokens must have at most 9 decimal places, got "1.0000000001"'],
    ['free', 'price per million tokens must be a decimal number, got "free"'],
    ['1/3', 'price per million tokens must be a decimal number, got "1/3"'],
    ['1000000000000000', 'price per million tokens is too large, got "1000000000000000"'],
  ];
  for (const [input, message] of refused) {
    test(`${JSON.stringify(input)} is refused: ${message}`, () => assert.deepEqual(messages(PricePerMillion, input), [message]));
  }
  for (const input of [Number.NaN, Number.POSITIVE_INFINITY, null, true, {}]) {
    test(`${String(input)} is not a price`, () => assert.equal(PricePerMillion.safeParse(input).success, false));
  }
});

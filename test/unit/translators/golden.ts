// Golden tests for the translators: each case's request, whole answer and event sequence are run
// through a translator, and what comes out (the backend's request; the usage and text it read and
// the caller's answer; the caller's events, and what the stream read) is compared with the golden
// file beside the test (golden/<translator>.json). Ids and times the gateway makes up are replaced
// by placeholders, so a golden file says exactly what a caller sees. After a deliberate change,
// `UPDATE_GOLDEN=1 node --test test/unit/translators/` writes the files again: read their diff.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiError } from '../../../gateway/api/api-error.ts';
import type { UsageBlock } from '../../../gateway/api/usage-shape.ts';
import type { Exchange, Translator } from '../../../gateway/translators/translator.ts';
import type { JsonObject, TokenUsage } from '../../../gateway/wire/openai-wire.ts';

/** The gateway's usage block every case's answer is written with. */
export const USAGE: UsageBlock = {
  prompt_tokens: 12,
  completion_tokens: 5,
  total_tokens: 17,
  cost: 0.00034,
  carbon: { kWh: 0.0001, kgCO2eq: 0.00004 },
};

export interface GoldenCase {
  readonly name: string;
  /** The caller's request, as its API's schema checked it. */
  readonly request?: JsonObject;
  /** A whole answer from the backend. */
  readonly answer?: JsonObject;
  /** A stream's events from the backend, then how it ends: complete, or broken off with this error. */
  readonly events?: readonly JsonObject[];
  readonly breaksWith?: ApiError;
  /** The exchange, when it differs from the default one. */
  readonly exchange?: Partial<Exchange>;
}

const RANDOM_ID = /^(msg|chatcmpl|resp|fc|call|toolu)([-_])[0-9a-zA-Z]{8,}$/;

/** Made-up ids as `<msg>`, made-up times as `<time>`: what differs run to run. */
function normalized(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    const id = RANDOM_ID.exec(value);
    return id ? `<${id[1]}>` : value;
  }
  if ((key === 'created' || key === 'created_at') && typeof value === 'number') return '<time>';
  if (Array.isArray(value)) return value.map((item) => normalized(item));
  if (value !== null && typeof value === 'object')
    // A field left undefined is absent, as in the JSON a caller gets.
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === undefined ? [] : [[k, normalized(v, k)]])));
  return value;
}

/** Server-sent events (named or `data:` only) as a list, each data parsed when it is JSON. */
function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
      let parsed: unknown = data;
      try {
        parsed = JSON.parse(data);
      } catch {}
      return name === undefined ? parsed : { event: name, data: parsed };
    });
}

/** What a case makes of `translator`. */
function run(translator: Translator, base: Exchange, test: GoldenCase): JsonObject {
  const exchange = { ...base, ...test.exchange };
  const out: JsonObject = {};
  if (test.request) out.request = translator.request(structuredClone(test.request), exchange);
  if (test.answer) {
    const answer = translator.answer(structuredClone(test.answer), exchange);
    out.answer = { usage: answer.usage ?? null, text: answer.text(), written: answer.write(USAGE) };
  }
  if (test.events) {
    let text = '';
    let usage: TokenUsage | undefined;
    const stream = translator.stream(exchange, { text: (t) => (text += t), usage: (u) => (usage = u ?? usage) });
    let written = '';
    for (const event of structuredClone(test.events)) written += stream.event(event, undefined);
    written += test.breaksWith ? stream.fail(USAGE, test.breaksWith) : stream.end(USAGE);
    out.stream = { read: { text, usage: usage ?? null }, events: events(written), final: stream.final() ?? null };
  }
  return normalized(out) as JsonObject;
}

/**
 * One test per case: `translator` against golden/<name>.json (written anew with UPDATE_GOLDEN=1),
 * and one that the file holds no case the list lost.
 */
export function goldenTests(name: string, translator: Translator, base: Exchange, cases: readonly GoldenCase[]): void {
  const file = join(import.meta.dirname, 'golden', `${name}.json`);
  const updating = process.env.UPDATE_GOLDEN === '1';
  const golden = updating ? {} : (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  const got: Record<string, unknown> = {};
  for (const one of cases)
    test(one.name, () => {
      got[one.name] = run(translator, base, one);
      if (!updating) assert.deepEqual(got[one.name], golden[one.name]);
    });
  if (updating) after(() => writeFileSync(file, `${JSON.stringify(got, null, 2)}\n`));
  else
    test(`${name}.json holds these cases and no others`, () =>
      assert.deepEqual(
        Object.keys(golden),
        cases.map((c) => c.name),
      ));
}

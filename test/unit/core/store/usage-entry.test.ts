// A usage record's stream entry (core/store/redis/usage-entry.ts) against the layout's table of
// its shapes (layout.ts USAGE_ENTRY_REVISIONS): what this build writes reads back as it was, is
// of the newest revision, and the revisions follow one another. Entries of the older shapes are
// read from a real Redis in test/integration/core/store/redis-layout.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { USAGE_ENTRY_REVISIONS } from '../../../../core/store/redis/layout.ts';
import { decodeUsageEntry, encodeUsageEntry } from '../../../../core/store/redis/usage-entry.ts';
import type { UsageRecord } from '../../../../core/store/usage-log.ts';

const RECORDS: readonly [what: string, record: UsageRecord][] = [
  [
    'a chat request through a fallback, a team, money uncovered and usage not believed',
    {
      id: 'rec-1',
      time: 1_780_000_000_123,
      user_id: 'alice',
      key_id: 'k1',
      team_id: 'red',
      router: 'chat',
      requested_router: 'big',
      provider: 'sim-1',
      endpoint: 'chat',
      status: 200,
      prompt_tokens: 10,
      completion_tokens: 20,
      audio_seconds: 0,
      cached_tokens: 0,
      cache_write_tokens: 0,
      cost_micros: 12_345_678_901_234_567_890n,
      charged_micros: 1_000n,
      uncovered_micros: 12_345_678_901_234_566_890n,
      usage_anomaly: 'prompt_tokens,completion_tokens',
      kwh: 0.5,
      kgco2eq: 0.25,
      latency_ms: 120,
      ttft_ms: 40,
      incomplete: true,
    },
  ],
  [
    'a transcription with no key, team, provider or first token, and names to escape',
    {
      id: 'rec-"2"\n',
      time: 0,
      user_id: 'bob\\',
      key_id: null,
      team_id: null,
      router: 'whisper \u2028',
      requested_router: 'whisper \u2028',
      provider: null,
      endpoint: 'transcriptions',
      status: 502,
      prompt_tokens: 0,
      completion_tokens: 0,
      audio_seconds: 12.5,
      cached_tokens: 0,
      cache_write_tokens: 0,
      cost_micros: 0n,
      charged_micros: 0n,
      uncovered_micros: 0n,
      usage_anomaly: null,
      kwh: 0,
      kgco2eq: 0,
      latency_ms: 3,
      ttft_ms: null,
      incomplete: false,
    },
  ],
];

for (const [what, record] of RECORDS) {
  test(`an entry written reads back as its record: ${what}`, () => {
    const entry = encodeUsageEntry(record);
    assert.ok(!entry.includes('\n'), 'one line: the append script splits a batch on line breaks');
    assert.deepEqual(decodeUsageEntry(entry), record);
  });
}

test('what this build writes holds every field the revisions added: it is of the newest', () => {
  const written = Object.keys(JSON.parse(encodeUsageEntry(RECORDS[0]![1])) as object);
  for (const revision of USAGE_ENTRY_REVISIONS) {
    for (const field of revision.adds) assert.ok(written.includes(field), `${field} (revision ${revision.revision})`);
  }
});

test('the revisions follow one another from 2, each adding fields none before it did', () => {
  assert.deepEqual(
    USAGE_ENTRY_REVISIONS.map((revision) => revision.revision),
    USAGE_ENTRY_REVISIONS.map((_, i) => i + 2),
  );
  const added = USAGE_ENTRY_REVISIONS.flatMap((revision) => revision.adds);
  assert.equal(new Set(added).size, added.length);
});

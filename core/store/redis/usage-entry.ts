// A usage record as its stream entry (the field `r` of an entry of keys.usage): written in this
// build's shape, read in any shape the layout declares (layout.ts USAGE_ENTRY_REVISIONS), since a
// stream keeps the entries of earlier builds until the retention trims them. Both run once per
// record, the writer on every request's path: an entry of this build's shape is read at the cost
// of one property test, an older one goes through the readers of the revisions it lacks.
import type { UsageRecord } from '../usage-log.ts';
import { type StoredUsageEntry, type UsageEntry, USAGE_ENTRY_REVISIONS } from './layout.ts';

/** The field that tells an entry of this build's shape: the first one the newest revision added. */
const NEWEST_FIELD = USAGE_ENTRY_REVISIONS[USAGE_ENTRY_REVISIONS.length - 1]!.adds[0];

/**
 * The entry of a record: JSON, with the amounts of money as strings (bigints). Written field by
 * field (strings through JSON.stringify, numbers as they are), once per request: a copy of the
 * record to stringify cost twice as much.
 */
export function encodeUsageEntry(r: UsageRecord): string {
  const text = JSON.stringify;
  return `{"id":${text(r.id)},"time":${r.time},"user_id":${text(r.user_id)},"key_id":${text(r.key_id)},"team_id":${text(r.team_id)},"router":${text(r.router)},"requested_router":${text(r.requested_router)},"provider":${text(r.provider)},"endpoint":${text(r.endpoint)},"status":${r.status},"prompt_tokens":${text(r.prompt_tokens)},"completion_tokens":${text(r.completion_tokens)},"audio_seconds":${r.audio_seconds},"cached_tokens":${r.cached_tokens},"cache_write_tokens":${r.cache_write_tokens},"cost_micros":"${r.cost_micros}","charged_micros":"${r.charged_micros}","uncovered_micros":"${r.uncovered_micros}","usage_anomaly":${text(r.usage_anomaly)},"kwh":${text(r.kwh)},"kgco2eq":${text(r.kgco2eq)},"latency_ms":${text(r.latency_ms)},"ttft_ms":${text(r.ttft_ms)},"incomplete":${r.incomplete}}`;
}

/** The record of an entry's JSON, in whichever shape it was written. */
export function decodeUsageEntry(json: string): UsageRecord {
  const stored = JSON.parse(json) as StoredUsageEntry;
  const entry = NEWEST_FIELD in stored ? (stored as UsageEntry) : upgrade(stored);
  return {
    ...entry,
    cost_micros: BigInt(entry.cost_micros),
    charged_micros: BigInt(entry.charged_micros),
    uncovered_micros: BigInt(entry.uncovered_micros),
  };
}

/**
 * An entry of an earlier shape in this build's: its revision is the newest whose first field it
 * holds (the first shape holds none), and each later revision's reader fills in what it added,
 * oldest first (so the fields follow in the order they came).
 */
function upgrade(stored: StoredUsageEntry): UsageEntry {
  let lacking = USAGE_ENTRY_REVISIONS.length;
  while (lacking > 0 && !(USAGE_ENTRY_REVISIONS[lacking - 1]!.adds[0] in stored)) lacking--;
  for (const revision of USAGE_ENTRY_REVISIONS.slice(lacking)) Object.assign(stored, revision.before(stored));
  return stored as UsageEntry;
}

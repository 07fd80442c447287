// A provider's hash on Redis (queueKeys.metrics: `tg:p:{p:<id>}:metrics`), its fields declared
// once. Provider health owns some of them (redis-provider-health.ts in TypeScript,
// lua/health-common.lua in the scripts): the cool-down, which an open circuit breaker writes too,
// the health checks' verdict, the failures in a row, the probe let through a cooling provider. The
// queue's releases write the others: how the provider did, fleet-wide. TypeScript reads the names
// here; the scripts get the same names as a prelude written from them (H.* and M.*), so no name
// is spelt twice.

/** The fields provider health owns. */
export const HEALTH_FIELDS = {
  /** No requests before this time (ms since the epoch): a cool-down, or a breaker a gateway opened; 0: none. */
  coolUntil: 'cool',
  /** Why it is out: the failure that opened the breaker, or the failed probe's. */
  reason: 'why',
  /** '1' while its health checks fail, '0' once they pass; absent while it is not checked. */
  down: 'down',
  /** When the health checks' last verdict came (ms since the epoch). */
  checkedAt: 'checked',
  /** Failures in a row in queue mode: the threshold starts a cool-down. */
  failsInRow: 'fails',
  /** While it cools down, no probe request goes before this time (ms). */
  probeAt: 'probe_at',
  /** The request let through as the cooling provider's probe: its good answer ends the cool-down. */
  probeId: 'probe_id',
} as const;

/** The fields the queue's releases write (queue-release.lua): moving averages and counts, fleet-wide. */
export const PERFORMANCE_FIELDS = {
  /** Answers and failures counted. */
  answers: 'n',
  /** Moving averages (ms): time to first token, latency, time per output token. */
  ttftMs: 'ttft',
  latencyMs: 'latency',
  tpotMs: 'tpot',
  /** Moving averages of the share of failures, and of timeouts (0 to 1). */
  errorRate: 'errors',
  timeoutRate: 'timeouts',
  /** Answers refused with 429, and when the last came (ms). */
  limited: 'limited',
  limitedAt: 'limited_at',
} as const;

/** Pub/sub: each change a gateway makes, `id|open|<until>|<reason>`, `id|closed`, `id|up` or `id|down|<reason>`. */
export const PROVIDER_HEALTH_CHANNEL = 'tg:provider-health';

/** String with a TTL: the gateway that runs the provider's health checks (one at a time, fleet-wide). */
export const probeKey = (id: string) => `tg:p:{p:${id}}:probe`;

/** While a provider cools down, one request is let through as a probe this often, fleet-wide; its answer ends the cool-down. */
export const COOLING_PROBE_EVERY_MS = 5_000;

/** The prelude of the scripts that read or write a provider's hash: H.<FIELD> and M.<FIELD> name its fields. */
export function providerFieldsPrelude(): string {
  const table = (name: string, fields: Record<string, string>) =>
    `local ${name} = { ${Object.entries(fields)
      .map(([key, field]) => `${luaName(key)} = ${JSON.stringify(field)}`)
      .join(', ')} }`;
  return [
    table('H', HEALTH_FIELDS),
    table('M', PERFORMANCE_FIELDS),
    `H.CHANNEL = ${JSON.stringify(PROVIDER_HEALTH_CHANNEL)}`,
    `H.PROBE_EVERY_MS = ${COOLING_PROBE_EVERY_MS}`,
  ].join('\n');
}

/** `coolUntil` -> `COOL_UNTIL`: the scripts' spelling of a field's key. */
function luaName(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase();
}

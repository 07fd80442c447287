// Gateway reports on Redis: one key per pod, `tg:gateways:<pod>` = JSON {version, at}, written
// with a TTL (PX), so a pod that died without a word drops out by itself.
import type { Redis } from 'ioredis';
import type { GatewayReports, ServingGateway } from '../gateway-reports.ts';
import { keys } from './keys.ts';

const PREFIX = keys.gateway('');

export class RedisGateways implements GatewayReports {
  readonly #redis: Redis;

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  async report(pod: string, version: string, ttlMs: number, at = new Date()): Promise<void> {
    await this.#redis.set(keys.gateway(pod), JSON.stringify({ version, at: at.toISOString() }), 'PX', ttlMs);
  }

  async forget(pod: string): Promise<void> {
    await this.#redis.del(keys.gateway(pod));
  }

  /** Every live report (SCAN, then one MGET), by pod name. */
  async list(): Promise<ServingGateway[]> {
    const found = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.#redis.scan(cursor, 'MATCH', keys.gatewayPattern, 'COUNT', 500);
      cursor = next;
      for (const key of batch) found.add(key);
    } while (cursor !== '0');
    const names = [...found].sort();
    if (names.length === 0) return [];
    const values = await this.#redis.mget(...names);
    const gateways: ServingGateway[] = [];
    names.forEach((key, i) => {
      const report = parse(values[i]);
      // A key may have expired between SCAN and MGET; one that is not a report is not a gateway.
      if (report) gateways.push({ pod: key.slice(PREFIX.length), ...report });
    });
    return gateways;
  }
}

function parse(raw: string | null | undefined): { version: string; at: string } | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as { version?: unknown; at?: unknown };
    return typeof value.version === 'string' && typeof value.at === 'string' ? { version: value.version, at: value.at } : undefined;
  } catch {
    return undefined;
  }
}

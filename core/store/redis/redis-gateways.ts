// Gateway reports on Redis: one key per pod, `tg:gateways:<pod>` = JSON {version, at}, written
// with a TTL (PX), so a pod that died without a word drops out by itself.
import { pipelined, scanAll, type RedisClient } from './redis-client.ts';
import type { GatewayReports, ServingGateway } from '../gateway-reports.ts';
import { keys } from './keys.ts';

const PREFIX = keys.gateway('');

export class RedisGateways implements GatewayReports {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  async report(pod: string, version: string, ttlMs: number, at = new Date()): Promise<void> {
    await this.#redis.set(keys.gateway(pod), JSON.stringify({ version, at: at.toISOString() }), 'PX', ttlMs);
  }

  async forget(pod: string): Promise<void> {
    await this.#redis.del(keys.gateway(pod));
  }

  /** Every live report (SCAN, then one pipeline of GETs: one per slot on a cluster), by pod name. */
  async list(): Promise<ServingGateway[]> {
    const names = (await scanAll(this.#redis, keys.gatewayPattern)).sort();
    const values = (
      await pipelined(
        this.#redis,
        names,
        (key) => key,
        (pipeline, key) => pipeline.get(key),
      )
    ).map(([, value]) => (typeof value === 'string' ? value : null));
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

// Prompt-ratio histograms on Redis: one hash for every router (keys.promptRatios), written by
// lua/prompt-ratios-add.lua, read whole. Gateways write and read it every few seconds, off the
// request path (billing/prompt-ratio-learner.ts).
import type { RedisClient } from './redis-client.ts';
import { RATIO_HALVING_TOTAL, type PromptRatioStore, type RatioCounts } from '../prompt-ratios.ts';
import { keys } from './keys.ts';
import { defineScript, type LuaScript } from './scripts.ts';

export class RedisPromptRatios implements PromptRatioStore {
  readonly #redis: RedisClient;
  readonly #add: LuaScript;

  constructor(redis: RedisClient) {
    this.#redis = redis;
    this.#add = defineScript(redis, 'prompt-ratios-add', 1);
  }

  async add(counts: RatioCounts): Promise<void> {
    if (counts.size === 0) return;
    const entries = [...counts].map(([router, buckets]) => [router, [...buckets]]);
    await this.#add.run(keys.promptRatios, JSON.stringify(entries), RATIO_HALVING_TOTAL);
  }

  async read(): Promise<RatioCounts> {
    const hash = await this.#redis.hgetall(keys.promptRatios);
    const out: RatioCounts = new Map();
    for (const [field, count] of Object.entries(hash)) {
      const colon = field.indexOf(':');
      const bucket = Number(field.slice(0, colon));
      const router = field.slice(colon + 1);
      let buckets = out.get(router);
      if (!buckets) {
        buckets = new Map();
        out.set(router, buckets);
      }
      buckets.set(bucket, Number(count));
    }
    return out;
  }
}

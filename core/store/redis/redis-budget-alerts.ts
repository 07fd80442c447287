// Budget alerts on Redis: the stream keys.alerts, written by lua/settle.lua. Each consumer group
// (XGROUP) reads it on a connection of its own (XREADGROUP blocks); an alert is acknowledged
// (XACK) once delivered, and one left pending (its delivery failed, or its gateway died) is taken
// again (XAUTOCLAIM) by any consumer of the group once idle for retryAfterMs: at least once.
import { duplicateClient, type RedisClient } from './redis-client.ts';
import { randomId } from '../../ids.ts';
import type { AlertConsumer, AlertConsumerOptions, BudgetAlert, BudgetAlerts } from '../budget-alerts.ts';
import type { LevelName } from '../ledger.ts';
import { keys } from './keys.ts';

/** How long one XREADGROUP waits for an alert, so that stopping and reclaiming are never far off. */
const BLOCK_MS = 1000;
const COUNT = 16;

type Entry = [id: string, fields: string[]];

export class RedisBudgetAlerts implements BudgetAlerts {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  consume(group: string, deliver: (alert: BudgetAlert) => Promise<void>, options: AlertConsumerOptions): AlertConsumer {
    const reader = duplicateClient(this.#redis, { maxRetriesPerRequest: null, retryStrategy: () => 200 });
    reader.on('error', () => {
      // Reconnects by itself; the loop below waits and reads again.
    });
    const consumer = `c-${randomId()}`;
    let stopped = false;
    const ready = this.#ensureGroup(group).catch(() => {
      // Redis unreachable: the loop sets the group up once it answers.
    });
    const loop = (async () => {
      await ready;
      while (!stopped) {
        try {
          await this.#ensureGroup(group);
          const reclaimed = (await this.#redis.xautoclaim(keys.alerts, group, consumer, options.retryAfterMs, '0-0', 'COUNT', COUNT)) as [
            string,
            Entry[],
          ];
          await this.#deliverAll(group, reclaimed[1], deliver);
          if (stopped) break;
          const read = (await reader.xreadgroup(
            'GROUP',
            group,
            consumer,
            'COUNT',
            COUNT,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            keys.alerts,
            '>',
          )) as [string, Entry[]][] | null;
          if (read) await this.#deliverAll(group, read[0]![1], deliver);
        } catch {
          if (stopped) break;
          // Redis unreachable, or the stream gone (flushed): wait, then set the group up again.
          await new Promise((resolve) => setTimeout(resolve, Math.min(options.retryAfterMs, BLOCK_MS)).unref());
        }
      }
    })();
    return {
      ready,
      stop: async () => {
        stopped = true;
        reader.disconnect();
        await loop;
      },
    };
  }

  async #ensureGroup(group: string): Promise<void> {
    try {
      // `$`: the alerts raised from now on; those before the group existed were nobody's to deliver.
      await this.#redis.xgroup('CREATE', keys.alerts, group, '$', 'MKSTREAM');
    } catch (error) {
      if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
    }
  }

  /** Delivers each entry in turn and acknowledges it; one that fails stays pending, to be reclaimed. */
  async #deliverAll(group: string, entries: Entry[], deliver: (alert: BudgetAlert) => Promise<void>): Promise<void> {
    for (const [id, fields] of entries) {
      // A reclaimed entry trimmed from the stream meanwhile comes back without fields.
      const alert = fields ? readAlert(fields) : undefined;
      if (alert) {
        try {
          await deliver(alert);
        } catch {
          continue;
        }
      }
      await this.#redis.xack(keys.alerts, group, id);
    }
  }
}

function readAlert(fields: string[]): BudgetAlert | undefined {
  const raw = fields[fields.indexOf('a') + 1];
  if (raw === undefined) return undefined;
  const a = JSON.parse(raw) as {
    key: string;
    level: LevelName;
    id: string;
    user: string;
    percent: number;
    budget: number | string;
    spent: number | string;
    exhausted?: boolean;
    period: string;
    at: number;
  };
  return {
    key: a.key,
    level: a.level,
    id: a.id,
    user: a.user,
    percent: a.percent,
    budgetMicros: BigInt(a.budget),
    spentMicros: BigInt(a.spent),
    // Absent from the alerts raised before it was added: those were all reached by spending.
    exhausted: a.exhausted === true,
    period: a.period,
    at: a.at,
  };
}

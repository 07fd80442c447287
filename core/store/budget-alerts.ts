// Budget alerts: raised when a level's spending reaches one of its thresholds, and when a hard
// budget runs out (less is left than a request needs: every threshold up to 100% then), once per
// period each (lua/ledger-common.lua, memory-ledger.ts), and handed to whoever delivers them: the
// gateways (webhook, metric) and the operator (a Kubernetes Event). Each consumer group gets
// every alert raised after the group first started, from whichever process of the group takes
// it; delivery is at least once: an alert whose delivery failed, or whose process died, is offered
// again, and its `key` lets the receiver drop the repeats.
import type { LevelName } from './ledger.ts';

export interface BudgetAlert {
  /** `<level>:<id>:<period>:<percent>`: the same for every delivery of one alert. */
  readonly key: string;
  readonly level: LevelName;
  /** The key's, user's or team's id. */
  readonly id: string;
  /** The user whose request reached the threshold. */
  readonly user: string;
  /** The threshold, in percent of the budget. */
  readonly percent: number;
  readonly budgetMicros: bigint;
  /** Spent in the period when the threshold was reached. */
  readonly spentMicros: bigint;
  /**
   * true: raised because the hard budget ran out (it refused a request, or cut a charge short,
   * as less was left than the request needed) before spending reached the threshold; false:
   * spending reached it.
   */
  readonly exhausted: boolean;
  /** The period, `<kind>:<index>` as the ledger counts it (`:0` without a period). */
  readonly period: string;
  /** When it was raised (ms). */
  readonly at: number;
}

export interface AlertConsumerOptions {
  /** A delivery that failed, or was taken by a process that died, is offered again after this long. */
  readonly retryAfterMs: number;
}

export interface AlertConsumer {
  /** Resolves once the group is set up: alerts raised from then on reach it. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export interface BudgetAlerts {
  /**
   * Hands each alert to `deliver`, one at a time: resolved, it is done for the group; rejected,
   * it is offered again (to this or another process of the group) after options.retryAfterMs.
   */
  consume(group: string, deliver: (alert: BudgetAlert) => Promise<void>, options: AlertConsumerOptions): AlertConsumer;
}

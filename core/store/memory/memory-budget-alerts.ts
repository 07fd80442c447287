// Budget alerts of a single process: raised by the memory ledger, handed to each consumer group
// in the order raised; a failed delivery is offered again after retryAfterMs.
import type { AlertConsumer, AlertConsumerOptions, BudgetAlert, BudgetAlerts } from '../budget-alerts.ts';

interface Group {
  readonly deliver: (alert: BudgetAlert) => Promise<void>;
  readonly options: AlertConsumerOptions;
  readonly waiting: BudgetAlert[];
  running: boolean;
  stopped: boolean;
  retry: NodeJS.Timeout | undefined;
}

/** Most alerts a group holds undelivered: past it, the oldest are dropped (as the Redis stream is trimmed). */
const MAX_WAITING = 10_000;

export class MemoryBudgetAlerts implements BudgetAlerts {
  readonly #groups = new Map<string, Group>();

  /** Called by the ledger as settlement raises an alert. */
  raise(alert: BudgetAlert): void {
    for (const group of this.#groups.values()) {
      group.waiting.push(alert);
      if (group.waiting.length > MAX_WAITING) group.waiting.shift();
      this.#run(group);
    }
  }

  consume(name: string, deliver: (alert: BudgetAlert) => Promise<void>, options: AlertConsumerOptions): AlertConsumer {
    const group: Group = { deliver, options, waiting: [], running: false, stopped: false, retry: undefined };
    this.#groups.set(name, group);
    return {
      ready: Promise.resolve(),
      stop: async () => {
        group.stopped = true;
        clearTimeout(group.retry);
        if (this.#groups.get(name) === group) this.#groups.delete(name);
      },
    };
  }

  #run(group: Group): void {
    if (group.running || group.stopped || group.retry !== undefined) return;
    const alert = group.waiting[0];
    if (alert === undefined) return;
    group.running = true;
    group.deliver(alert).then(
      () => {
        group.running = false;
        group.waiting.shift();
        this.#run(group);
      },
      () => {
        group.running = false;
        // Offered again later, ahead of the alerts raised since (as a Redis consumer's pending entry).
        group.retry = setTimeout(() => {
          group.retry = undefined;
          this.#run(group);
        }, group.options.retryAfterMs);
        group.retry.unref();
      },
    );
  }
}

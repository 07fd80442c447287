// The gateways deliver budget alerts: each gateway joins one consumer group of the store's alerts
// (store/budget-alerts.ts), so each alert is taken by one gateway, counted in
// tollgate_budget_alerts_total and, with a webhook, POSTed with retries and backoff. An alert
// that still fails stays pending and is offered again later, to this or another gateway.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertConsumer, BudgetAlert, BudgetAlerts } from '../../core/store/budget-alerts.ts';
import type { Log } from '../../core/log.ts';
import { backoffMs, type BackoffPolicy } from '../routing/backoff.ts';
import { postAlert, type WebhookTarget } from './webhook.ts';

/** The gateways' consumer group: every gateway of a store delivers from the same one. */
export const GATEWAY_ALERT_GROUP = 'tollgate-gateways';

export interface AlertDeliveryOptions {
  readonly webhook: WebhookTarget | undefined;
  readonly attempts: number;
  readonly backoff: BackoffPolicy;
  readonly retryAfterMs: number;
  readonly metrics: { delivered(alert: BudgetAlert): void; failed(): void };
  readonly log: Log;
}

export function deliverAlerts(alerts: BudgetAlerts, options: AlertDeliveryOptions): AlertConsumer {
  const { webhook, attempts, backoff, metrics, log } = options;
  return alerts.consume(
    GATEWAY_ALERT_GROUP,
    async (alert) => {
      if (webhook !== undefined) {
        for (let attempt = 1; ; attempt++) {
          try {
            await postAlert(webhook, alert);
            break;
          } catch (error) {
            metrics.failed();
            if (attempt >= attempts) {
              log.warn({ alert: alert.key, attempts }, `budget alert not delivered (${(error as Error).message}); offered again later`);
              throw error;
            }
            await sleep(backoffMs(backoff, attempt, Math.random()));
          }
        }
      }
      metrics.delivered(alert);
      log.info({ alert: alert.key, level: alert.level, subject: alert.id, percent: alert.percent }, 'budget alert');
    },
    { retryAfterMs: options.retryAfterMs },
  );
}

// A budget alert as the webhook receives it: a JSON body, signed with HMAC-SHA256 over the exact
// body (`x-tollgate-signature: sha256=<hex>`), and an `idempotency-key` that is the same for
// every delivery of one alert, so that a receiver drops repeats (delivery is at least once).
import { createHmac } from 'node:crypto';
import type { BudgetAlert } from '../../core/store/budget-alerts.ts';
import { microsToDecimal } from '../metering/cost.ts';

export const SIGNATURE_HEADER = 'x-tollgate-signature';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The body a receiver gets (docs/budgets.md shows one). */
export function alertBody(alert: BudgetAlert): string {
  return JSON.stringify({
    type: 'budget.threshold_reached',
    id: alert.key,
    level: alert.level,
    subject: alert.id,
    user: alert.user,
    percent: alert.percent,
    budget: microsToDecimal(alert.budgetMicros),
    spent: microsToDecimal(alert.spentMicros),
    exhausted: alert.exhausted,
    period: alert.period,
    raised_at: new Date(alert.at).toISOString(),
  });
}

/** `sha256=` and the hex HMAC-SHA256 of the body under the secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface WebhookTarget {
  readonly url: string;
  readonly secret: string | undefined;
  readonly timeoutMs: number;
}

/**
 * One POST; throws unless the receiver answers 2xx within the timeout. A redirect is not
 * followed: it would resend the body, its signature and its idempotency key to wherever the
 * answer points (fetch follows up to 20 by default, turning a 303 into a GET). It fails the
 * delivery as any other answer but 2xx, so it is logged and retried, and the URL to fix is named.
 */
export async function postAlert(target: WebhookTarget, alert: BudgetAlert): Promise<void> {
  const body = alertBody(alert);
  const headers: Record<string, string> = { 'content-type': 'application/json', [IDEMPOTENCY_HEADER]: alert.key };
  if (target.secret !== undefined) headers[SIGNATURE_HEADER] = signature(target.secret, body);
  const answer = await fetch(target.url, {
    method: 'POST',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(target.timeoutMs),
  });
  // The body is not read: drop it so the connection can be reused.
  await answer.body?.cancel();
  if (answer.status >= 300 && answer.status <= 399)
    throw new Error(`the alert webhook answered ${answer.status}, a redirect, not followed: set --alert-webhook-url to where it points`);
  if (answer.status < 200 || answer.status > 299) throw new Error(`the alert webhook answered ${answer.status}`);
}

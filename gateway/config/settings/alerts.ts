// Settings of budget alerts: the webhook they are POSTed to, how they are signed, and how often a
// delivery is tried. One group of the gateway's settings registry (gateway/config/settings.ts);
// the docs list them with budgets (docs/budgets.md).
import { z } from 'zod';
import type { Settings } from '../../../core/settings.ts';
import { Int } from './value-schemas.ts';

/** The alert webhook, in the order --help and the docs list them (group `alerts`). */
export const ALERT_SETTINGS = {
  alertWebhookUrl: {
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    value: '<url>',
    env: 'TOLLGATE_ALERT_WEBHOOK_URL',
    help: 'where budget alerts are POSTed (JSON, HMAC-signed: needs --alert-webhook-secret); none: alerts are counted only',
    doc: 'Where budget alerts are POSTed as JSON, signed with `--alert-webhook-secret` (required with it, unless `--alert-webhook-unsigned true`), with an `idempotency-key` header (docs/budgets.md). A redirect is never followed. Without it, alerts are only counted (`tollgate_budget_alerts_total`) and, in Kubernetes mode, recorded as Events.',
    group: 'alerts',
  },
  alertWebhookSecret: {
    schema: z.string().min(16, 'must have at least 16 characters').optional(),
    value: '<secret>',
    env: 'TOLLGATE_ALERT_WEBHOOK_SECRET',
    help: 'HMAC-SHA256 key of the alert webhook signature; prefer the variable to the flag',
    doc: 'The key of the `x-tollgate-signature: sha256=<hex>` HMAC-SHA256 of each alert body. Required with `--alert-webhook-url`. Prefer the variable (a mounted Secret) to the flag, which shows in `ps`.',
    group: 'alerts',
  },
  alertWebhookUnsigned: {
    // Absent is false; optional rather than defaulted, as only a webhook without a secret reads it.
    schema: z
      .preprocess((v) => (typeof v === 'boolean' ? String(v) : v), z.enum(['true', 'false']))
      .transform((v) => v === 'true')
      .optional(),
    value: '<bool>',
    env: 'TOLLGATE_ALERT_WEBHOOK_UNSIGNED',
    help: 'true: POST alerts to --alert-webhook-url unsigned, without --alert-webhook-secret',
    doc: "true: alerts are POSTed to `--alert-webhook-url` without a signature, for a receiver that cannot check one (it cannot tell them from anyone else's). Without it, a webhook without `--alert-webhook-secret` is refused at start-up; with a secret, it is refused as a contradiction.",
    defaultText: '`false`',
    group: 'alerts',
  },
  alertWebhookAttempts: {
    schema: Int(1, 20).default(5),
    value: '<n>',
    env: 'TOLLGATE_ALERT_WEBHOOK_ATTEMPTS',
    help: 'attempts to deliver one alert, with backoff, before it is left for a later retry',
    doc: 'Attempts to deliver one alert (a connection failure, a timeout or a non-2xx answer fails one), `--retry-base-ms` apart and doubling; after the last the alert stays pending and is offered again after `--alert-retry-seconds`, to this or another gateway.',
    group: 'alerts',
  },
  alertRetrySeconds: {
    schema: Int(1, 86_400).default(60),
    value: '<s>',
    env: 'TOLLGATE_ALERT_RETRY_SECONDS',
    help: 'an alert not delivered is offered again after this long',
    doc: 'An alert whose delivery failed every attempt, or whose gateway stopped while delivering it, is offered again after this long (at least once: a receiver drops repeats by their `idempotency-key`).',
    group: 'alerts',
  },
} as const satisfies Settings;

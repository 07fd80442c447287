// What an alert webhook receiver gets: a body that names the alert, its level and amounts as
// decimals, and a signature a receiver can check with the shared secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { alertBody, signature } from '../../../gateway/alerts/webhook.ts';

const alert = {
  key: 'team:research:monthly:682:80',
  level: 'team' as const,
  id: 'research',
  user: 'alice',
  percent: 80,
  budgetMicros: 500_000_000n,
  spentMicros: 400_250_000n,
  exhausted: false,
  period: 'monthly:682',
  at: Date.UTC(2026, 10, 26, 10, 15),
};

test('the body names the alert, with money as decimals and the time in ISO form', () => {
  assert.deepEqual(JSON.parse(alertBody(alert)), {
    type: 'budget.threshold_reached',
    id: 'team:research:monthly:682:80',
    level: 'team',
    subject: 'research',
    user: 'alice',
    percent: 80,
    budget: '500',
    spent: '400.25',
    exhausted: false,
    period: 'monthly:682',
    raised_at: '2026-11-26T10:15:00.000Z',
  });
});

test('the signature is the HMAC-SHA256 of the exact body, and changes with the body', () => {
  const body = alertBody(alert);
  assert.equal(
    signature('s3cret-s3cret-s3cret', body),
    `sha256=${createHmac('sha256', 's3cret-s3cret-s3cret').update(body).digest('hex')}`,
  );
  assert.notEqual(signature('s3cret-s3cret-s3cret', `${body} `), signature('s3cret-s3cret-s3cret', body));
});

// The alert webhook never follows a redirect: following one would resend the signed body, its
// signature and its idempotency key to wherever the receiver (or whoever answers for it) points.
// A 3xx is a failed delivery, retried as any other failure and logged, and the target never hears of it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { postAlert } from '../../../gateway/alerts/webhook.ts';
import { deliverAlerts } from '../../../gateway/alerts/alert-delivery.ts';
import { MemoryBudgetAlerts } from '../../../core/store/memory/memory-budget-alerts.ts';
import type { BudgetAlert } from '../../../core/store/budget-alerts.ts';
import { eventually } from '../../support/eventually.ts';

const alert: BudgetAlert = {
  key: 'user:alice::0:100',
  level: 'user',
  id: 'alice',
  user: 'alice',
  percent: 100,
  budgetMicros: 1_000_000n,
  spentMicros: 1_000_000n,
  exhausted: false,
  period: ':0',
  at: Date.UTC(2026, 10, 26),
};

let server: Server;
let base: string;
const hits: Record<string, number> = {};

before(async () => {
  // /hook redirects (each status in turn by its query), /target is where it points.
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    hits[url.pathname] = (hits[url.pathname] ?? 0) + 1;
    request.resume();
    if (url.pathname === '/hook') {
      response.writeHead(Number(url.searchParams.get('status') ?? 302), { location: '/target' }).end();
    } else {
      response.writeHead(200).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(() => {
  server.close();
});

test('a redirect fails the delivery, and its target gets nothing', async () => {
  for (const status of [301, 302, 303, 307, 308]) {
    await assert.rejects(
      postAlert({ url: `${base}/hook?status=${status}`, secret: 'a-webhook-secret-of-some-length', timeoutMs: 5000 }, alert),
      new RegExp(`answered ${status}, a redirect, not followed`),
    );
  }
  assert.equal(hits['/hook'], 5);
  assert.equal(hits['/target'], undefined);
});

test('a redirected alert is retried and logged as any failed delivery, never followed', async () => {
  hits['/hook'] = 0;
  const alerts = new MemoryBudgetAlerts();
  const warnings: string[] = [];
  let failed = 0;
  let delivered = 0;
  const consumer = deliverAlerts(alerts, {
    webhook: { url: `${base}/hook?status=307`, secret: 'a-webhook-secret-of-some-length', timeoutMs: 5000 },
    attempts: 3,
    backoff: { baseMs: 1, maxMs: 2, retryAfterMaxMs: 0 },
    retryAfterMs: 60_000,
    metrics: { delivered: () => void delivered++, failed: () => void failed++ },
    log: { debug() {}, info() {}, warn: (_details, message) => void warnings.push(message), error() {} },
  });
  alerts.raise(alert);
  await eventually(() => warnings.length === 1, 'the failure logged');
  await consumer.stop();
  assert.equal(hits['/hook'], 3, 'each attempt went to the webhook itself');
  assert.equal(hits['/target'], undefined);
  assert.equal(failed, 3);
  assert.equal(delivered, 0);
  assert.match(warnings[0]!, /not delivered \(the alert webhook answered 307, a redirect, not followed/);
});

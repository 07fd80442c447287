// Budget alerts through a webhook, with two gateways on one Redis: a user's spending crosses 50%
// and 100% of their budget through both gateways at once; the receiver (a real HTTP server on
// loopback) refuses the first delivery; each threshold still arrives, signed, with one
// idempotency key, delivered successfully exactly once however many gateways and retries.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { eventually } from '../../support/eventually.ts';

const SECRET = 'a-webhook-secret-of-some-length';
const userKey = generateKey().secret;

interface Delivery {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

const bed = testBed({ redis: true });
let receiver: Server;
const deliveries: Delivery[] = [];
const gateways: GatewayProcess[] = [];

before(async () => {
  // The first delivery is refused (the receiver is "down"); the rest are accepted.
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const status = deliveries.length === 0 ? 503 : 200;
      deliveries.push({ status, body, headers: request.headers });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address() as { port: number };
  const config: GatewayConfig = {
    users: [{ id: 'bob', name: 'Bob', budget: '0.2', budget_alerts: [50, 100], keys: [{ name: 'k', key: '${BOB_KEY}' }] }],
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        costs: { prompt_tokens: 0, completion_tokens: 1000 },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
    ],
  };
  const args = ['--alert-webhook-url', `http://127.0.0.1:${address.port}/hooks/budget`, '--retry-base-ms', '20'];
  const env = { BOB_KEY: userKey, TOLLGATE_ALERT_WEBHOOK_SECRET: SECRET };
  gateways.push(await bed.process(config, { args, env }));
  gateways.push(await bed.process(config, { args, env }));
});

after(() => {
  receiver.close();
});

test('each threshold reached through two gateways is delivered once, signed, after the receiver refused the first try', async () => {
  // 0.01 a request: 20 requests spend the whole 0.2, half through each gateway, all at once.
  const statuses = await Promise.all(
    Array.from({ length: 24 }, async (_, i) => {
      const answer = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
      });
      await answer.arrayBuffer();
      return answer.status;
    }),
  );
  assert.equal(statuses.filter((s) => s === 200).length, 20);

  const accepted = await eventually(() => {
    const ok = deliveries.filter((d) => d.status === 200);
    return ok.length >= 2 && ok;
  }, 'both thresholds delivered');
  assert.equal(deliveries[0]!.status, 503, 'the first try was refused, and tried again');
  const bodies = accepted.map((d) => JSON.parse(d.body) as { id: string; percent: number; level: string; subject: string; spent: string });
  assert.deepEqual(bodies.map((b) => [b.level, b.subject, b.percent]).sort(), [
    ['user', 'bob', 100],
    ['user', 'bob', 50],
  ]);
  assert.equal(bodies.find((b) => b.percent === 100)!.spent, '0.2');
  for (const delivery of accepted) {
    const expected = `sha256=${createHmac('sha256', SECRET).update(delivery.body).digest('hex')}`;
    assert.equal(delivery.headers['x-tollgate-signature'], expected, 'signed over the exact body');
    assert.equal(delivery.headers['idempotency-key'], JSON.parse(delivery.body).id);
  }
  // The refused try and its retry carry the same idempotency key.
  assert.ok(accepted.some((d) => d.headers['idempotency-key'] === deliveries[0]!.headers['idempotency-key']));
  // Nothing more comes: each threshold was raised once, and each delivery acknowledged once.
  const metrics = await Promise.all(gateways.map(async (g) => (await fetch(`${g.url}/metrics`)).text()));
  const delivered = metrics
    .flatMap((text) => text.split('\n').filter((line) => line.startsWith('tollgate_budget_alerts_total{')))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  assert.equal(delivered, 2, 'counted once each, across both gateways');
  assert.equal(deliveries.filter((d) => d.status === 200).length, 2);
});

// A Redis outage must not flood the log: each refused request used to write two lines (the 503
// warning, and its usage record not written), about 4,200 in 15 s. Repeated lines now collapse
// to one per kind per 10 s, plus one that counts those left out (unit test: log-throttle).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from '../http/helpers.ts';
import { danaKey, pricedConfig } from '../../support/priced-config.ts';
import { HANG_MS } from '../../support/patience.ts';

const REFUSED = 100;
const { key, user } = danaKey();
const config = pricedConfig(user);

const bed = testBed({ redis: true });
let gateway: GatewayProcess;
before(async () => {
  gateway = await bed.process(config);
});

const chat = () =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });

test(`${REFUSED} requests refused during an outage write a bounded number of log lines`, { timeout: HANG_MS }, async () => {
  assert.equal(await chat(), 200);
  await bed.redis.kill();
  assert.equal(await waitUntil(chat, (status) => status === 503), 503);
  const before = gateway.output.length;
  for (let i = 0; i < REFUSED; i++) assert.equal(await chat(), 503);
  // (Before: two lines a request, 200 or so here.)
  const lines = gateway.output.slice(before);
  assert.ok(lines.length <= 6, `${lines.length} lines for ${REFUSED} refused requests:\n${lines.join('\n')}`);
});

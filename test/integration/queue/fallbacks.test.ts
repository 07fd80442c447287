// Queue mode and failure handling: a request a queue-mode router cannot place within its wait
// ("Model is too busy") goes to the router's fallback instead of failing, and is answered by it;
// and no request waits for a slot past its deadline.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chat } from '../../support/routing.ts';
import { eventually } from '../../support/eventually.ts';

const bed = testBed({ redis: true });
let backend: FakeBackend;
let gw: TestGateway;

before(async () => {
  backend = await startFakeOpenAI();
  const config: GatewayConfig = {
    models: [
      {
        id: 'queued',
        type: 'text-generation',
        routing_mode: 'queue',
        queue: { max_wait_seconds: 0.5 },
        fallbacks: ['spare'],
        providers: [{ id: 'only', model: 'only', type: 'vllm', max_concurrent: 1, args: { api_url: backend.url } }],
      },
      { id: 'spare', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
      {
        id: 'patient',
        type: 'text-generation',
        routing_mode: 'queue',
        queue: { max_wait_seconds: 60 },
        providers: [{ id: 'slow', model: 'slow', type: 'simulator', max_concurrent: 1, args: { latency_ms: 5_000 } }],
      },
    ],
  };
  gw = await bed.gateway(config, { settings: { routerWorkers: 1 } });
});

after(async () => {
  await backend.close();
});

test('requests a queue-mode router is too busy for are served by its fallback', async () => {
  // The worker is up once the router serves a request itself.
  await eventually(async () => (await chat(gw, 'queued')).body.model === 'queued', 'the router worker places requests');
  const before = backend.requests.length;
  // One slot, held 2 s by each request: the others cannot get it within the 0.5 s wait.
  backend.behave({ delayMs: 2_000 });
  const answers = await Promise.all(Array.from({ length: 4 }, () => chat(gw, 'queued')));

  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200],
  );
  const served = answers.map((a) => a.body.model).sort();
  assert.equal(served.filter((m) => m === 'queued').length, 1, 'the one slot served one');
  assert.equal(served.filter((m) => m === 'spare').length, 3, 'the fallback took the others');
  assert.equal(backend.requests.length, before + 1);
  assert.match((await gw.get('/metrics')).body, /tollgate_fallbacks_total\{from="queued",to="spare",reason="too_busy"\} [3-9]/);
});

test("a request waits for a slot no longer than its deadline: x-tollgate-timeout shortens the router's 60 s wait", async () => {
  const holding = chat(gw, 'patient');
  // The one slot is taken by the first request (5 s); the second may wait 0.5 s only.
  await eventually(async () => {
    const depth = (await gw.get('/v1/admin/routing')).body.providers.find((p: { id: string }) => p.id === 'slow')?.in_use;
    return depth === 1;
  }, 'the slot taken');
  const answer = await chat(gw, 'patient', { ...gw.auth, 'x-tollgate-timeout': '0.5' });
  assert.equal(answer.status, 503);
  assert.equal(answer.body.error.code, 'model_too_busy');
  assert.equal((await holding).status, 200);
});

test("a provider whose breaker a gateway opened gets no more queue-mode requests: the workers read the fleet's state", async (t) => {
  const [failing, steady] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  failing.behave({ status: 500 });
  const config: GatewayConfig = {
    models: [
      {
        id: 'pair',
        type: 'text-generation',
        routing_mode: 'queue',
        load_balancing_strategy: 'round_robin',
        providers: [
          { id: 'q-failing', model: 'f', type: 'vllm', retries: 0, args: { api_url: failing.url } },
          { id: 'q-steady', model: 's', type: 'vllm', retries: 0, args: { api_url: steady.url } },
        ],
      },
    ],
  };
  const own = await bed.gateway(config, {
    t,
    settings: { routerWorkers: 1, failureThreshold: 1, cooldownSeconds: 600 },
  });
  t.after(async () => {
    await Promise.all([failing.close(), steady.close()]);
  });

  await eventually(async () => (await chat(own, 'pair')).status === 200 && failing.requests.length >= 1, 'the failing provider tried once');
  const failedBefore = failing.requests.length;
  for (let i = 0; i < 8; i++) assert.equal((await chat(own, 'pair')).status, 200);
  assert.equal(failing.requests.length, failedBefore, 'no request placed on it while its breaker is open');
  const live = (await own.get('/v1/admin/routing')).body.providers.find((p: { id: string }) => p.id === 'q-failing');
  assert.equal(live.breaker, 'open');
  assert.ok(live.cooling_until !== null, 'the fleet cools it down until the breaker would half-open');
});

test("while a gateway's probe request is out on a half-open provider, its other queue-mode requests go elsewhere", async (t) => {
  const [flaky, steady] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  const config: GatewayConfig = {
    models: [
      {
        id: 'probed-pair',
        type: 'text-generation',
        routing_mode: 'queue',
        load_balancing_strategy: 'round_robin',
        providers: [
          { id: 'h-flaky', model: 'f', type: 'vllm', retries: 0, args: { api_url: flaky.url } },
          { id: 'h-steady', model: 's', type: 'vllm', retries: 0, args: { api_url: steady.url } },
        ],
      },
    ],
  };
  const own = await bed.gateway(config, {
    t,
    settings: { routerWorkers: 1, failureThreshold: 1, cooldownSeconds: 0.5 },
  });
  t.after(async () => {
    await Promise.all([flaky.close(), steady.close()]);
  });
  const breaker = async () =>
    (await own.get('/v1/admin/routing')).body.providers.find((p: { id: string }) => p.id === 'h-flaky')?.breaker as string;

  // One failure opens the breaker; half a second later it is half-open.
  flaky.once({ status: 500 });
  await eventually(async () => {
    await chat(own, 'probed-pair');
    return flaky.requests.length >= 1;
  }, 'the flaky provider failed once');
  await eventually(async () => (await breaker()) === 'half_open', 'the breaker half-open');

  // The next request placed on it is the probe: it answers slowly, and while it is out...
  flaky.behave({ delayMs: 1_500 });
  const before = flaky.requests.length;
  const probes: Promise<unknown>[] = [];
  await eventually(async () => {
    if (flaky.requests.length === before) probes.push(chat(own, 'probed-pair'));
    return flaky.requests.length > before;
  }, 'a probe request out on the half-open provider');
  // ...every other request of this gateway goes to the other provider.
  const answers = await Promise.all(Array.from({ length: 6 }, () => chat(own, 'probed-pair')));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200, 200],
  );
  assert.equal(flaky.requests.length, before + 1, 'only the probe reached the half-open provider');
  await Promise.all(probes);
  await eventually(async () => (await breaker()) === 'closed', 'the probe answered: closed');
});

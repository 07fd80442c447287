// Circuit breakers and active health checks, through real gateways, fake backends on real sockets
// and a real Redis. A breaker opens on failures, keeps requests off its provider, half-opens after
// the cool-down and closes on an answer; with Redis one gateway's opening spares the others.
// Health checks take a dead backend out before a user request fails on it, and put it back when it
// answers again. Where health shows: GET /v1/admin/routing, /metrics, GET /v1/models. What gateways
// share through Redis they share on a Redis Cluster too (a provider's health in its router's slot).
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig, ProviderEntry } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { eventually } from '../../support/eventually.ts';
import { chat, receivedModels } from '../../support/routing.ts';

const bed = testBed({ redis: true });
const clusterBed = testBed({ redis: 'cluster' });

async function backends(t: TestContext, count: number): Promise<FakeBackend[]> {
  const fakes = await Promise.all(Array.from({ length: count }, () => startFakeOpenAI()));
  t.after(() => Promise.all(fakes.map((fake) => fake.close())));
  return fakes;
}

/** Where gateways share what they learn: one Redis, or a Redis Cluster. */
type Shared = 'redis' | 'cluster';
const SHARED = { redis: 'one Redis', cluster: 'a Redis Cluster' } as const satisfies Record<Shared, string>;

/** A gateway in memory, or on the file's Redis (`'redis'`) or Redis Cluster (`'cluster'`), closed when `t` ends. */
function gateway(
  t: TestContext,
  config: GatewayConfig | string,
  settings: Record<string, unknown> = {},
  store: 'memory' | Shared = 'memory',
): Promise<TestGateway> {
  if (store === 'cluster') return clusterBed.gateway(config, { t, settings });
  return bed.gateway(config, { t, settings, store });
}

/**
 * Router `chat`, round robin over `flaky` (first) and `steady`, whose provider ids are `ids`;
 * `extra` are fields added to each provider.
 */
const twoProviders = (
  flaky: FakeBackend,
  steady: FakeBackend,
  extra: Partial<ProviderEntry> = {},
  ids = { flaky: 'flaky', steady: 'steady' },
): GatewayConfig => ({
  models: [
    {
      id: 'chat',
      type: 'text-generation',
      load_balancing_strategy: 'round_robin',
      providers: [
        { model: 'flaky', type: 'vllm', id: ids.flaky, retries: 0, args: { api_url: flaky.url }, ...extra },
        { model: 'steady', type: 'vllm', id: ids.steady, retries: 0, args: { api_url: steady.url }, ...extra },
      ],
    },
  ],
});

const providerLive = async (gw: TestGateway, id: string) =>
  ((await gw.get('/v1/admin/routing')).body.providers as { id: string }[]).find((p) => p.id === id) as Record<string, unknown>;

describe('circuit breakers', () => {
  test('open on failures, keep requests off the provider, then half-open and close on an answer', async (t) => {
    const [flaky, steady] = await backends(t, 2);
    flaky!.behave({ status: 500 });
    // The cool-down must outlast the ten requests below, which take a fraction of a second on a
    // quiet machine and took over a second on a loaded one (a probe then went out early).
    const gw = await gateway(t, twoProviders(flaky!, steady!), { failureThreshold: 2, cooldownSeconds: 5 });

    for (let i = 0; i < 4; i++) assert.equal((await chat(gw, 'chat')).status, 200, 'the steady provider answers');
    assert.equal(flaky!.requests.length, 2, 'two failures opened the breaker');
    assert.equal((await providerLive(gw, 'flaky')).breaker, 'open');
    assert.match((await gw.get('/metrics')).body, /tollgate_provider_breaker_state\{router="chat",provider="flaky"\} 2/);
    // No request while open: checked for each request sent before the cool-down ran out (on a busy
    // machine six requests may outlast its second; a probe after it is the next step's business).
    const openedUntil = (await providerLive(gw, 'flaky')).cooling_until;
    for (let i = 0; i < 6; i++) {
      await chat(gw, 'chat');
      const after = await providerLive(gw, 'flaky');
      if (after.breaker !== 'open' || after.cooling_until !== openedUntil) break;
      assert.equal(flaky!.requests.length, 2, 'no request while open');
    }

    flaky!.behave({});
    // After the cool-down one probe request goes; its answer closes the breaker.
    await eventually(async () => {
      await chat(gw, 'chat');
      return flaky!.requests.length > 2;
    }, 'a probe request after the cool-down');
    assert.equal((await providerLive(gw, 'flaky')).breaker, 'closed');
  });

  for (const shared of ['redis', 'cluster'] as const) {
    test(`one gateway opening a breaker spares the other gateways on the same Redis (${SHARED[shared]})`, async (t) => {
      const [flaky, steady] = await backends(t, 2);
      flaky!.behave({ status: 503 });
      const settings = { failureThreshold: 2, cooldownSeconds: 600 };
      const a = await gateway(t, twoProviders(flaky!, steady!), settings, shared);
      const b = await gateway(t, twoProviders(flaky!, steady!), settings, shared);

      for (let i = 0; i < 4 && flaky!.requests.length < 2; i++) await chat(a, 'chat');
      assert.equal(flaky!.requests.length, 2, 'gateway a saw two failures and opened its breaker');

      await eventually(async () => (await providerLive(b, 'flaky')).breaker === 'open', "gateway b follows a's opening");
      for (let i = 0; i < 6; i++) assert.equal((await chat(b, 'chat')).status, 200);
      assert.equal(flaky!.requests.length, 2, 'gateway b sent nothing to the provider a found down');
      assert.deepEqual(new Set(receivedModels(steady!)), new Set(['steady']));
    });

    test(`a gateway started after the opening reads it from Redis (${SHARED[shared]})`, async (t) => {
      const [flaky, steady] = await backends(t, 2);
      flaky!.behave({ status: 503 });
      const settings = { failureThreshold: 1, cooldownSeconds: 600 };
      const config = twoProviders(flaky!, steady!, {}, { flaky: 'flaky-late', steady: 'steady-late' });
      const a = await gateway(t, config, settings, shared);
      await chat(a, 'chat');
      assert.equal(flaky!.requests.length, 1);

      const late = await gateway(t, config, settings, shared);
      await eventually(async () => (await providerLive(late, 'flaky-late')).breaker === 'open', 'the late gateway reads the open breaker');
      for (let i = 0; i < 4; i++) await chat(late, 'chat');
      assert.equal(flaky!.requests.length, 1);
    });
  }
});

describe('active health checks', () => {
  test('a backend whose probes fail is taken out before a user request fails on it, and put back when it answers', async (t) => {
    const [sick, well] = await backends(t, 2);
    const checks = { health_check: { interval_seconds: 1, timeout_seconds: 1, unhealthy_after: 1, healthy_after: 1 } };
    const gw = await gateway(t, twoProviders(sick!, well!, checks), { hideUnavailableModels: true });
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === true, 'the first probe passes');

    sick!.healthStatus(503);
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === false, 'taken out within the probe interval');
    const live = await providerLive(gw, 'flaky');
    assert.match(String(live.health_reason), /health check failed: the backend answered 503/);
    const metrics = (await gw.get('/metrics')).body;
    assert.match(metrics, /tollgate_provider_healthy\{router="chat",provider="flaky"\} 0/);
    assert.match(metrics, /tollgate_health_checks_total\{router="chat",provider="flaky",result="failed"\} [1-9]/);

    for (let i = 0; i < 6; i++) assert.equal((await chat(gw, 'chat')).status, 200);
    assert.equal(sick!.requests.length, 0, 'no user request was sent to the unhealthy backend');
    assert.ok(sick!.healthProbes >= 2, 'probes are GETs of /health, not user requests');

    sick!.healthStatus(200);
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === true, 'put back when it answers');
    for (let i = 0; i < 4; i++) await chat(gw, 'chat');
    assert.ok(sick!.requests.length > 0, 'used again');
  });

  test('a backend killed is taken out within the probe interval; started again on its port, it is used again', async (t) => {
    const [well] = await backends(t, 1);
    let killed = await startFakeOpenAI();
    const port = Number(new URL(killed.url).port);
    t.after(() => killed.close());
    const checks = { health_check: { interval_seconds: 1, timeout_seconds: 1, unhealthy_after: 1 } };
    const gw = await gateway(t, twoProviders(killed, well!, checks));
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === true, 'the first probe passes');

    await killed.close();
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === false, 'taken out once its probe is refused');
    assert.match(String((await providerLive(gw, 'flaky')).health_reason), /could not be reached/);
    for (let i = 0; i < 4; i++)
      assert.equal((await chat(gw, 'chat')).status, 200, 'the other provider serves, nothing is sent to the dead one');

    killed = await startFakeOpenAI(port);
    await eventually(async () => (await providerLive(gw, 'flaky')).healthy === true, 'put back once it answers');
    for (let i = 0; i < 4; i++) await chat(gw, 'chat');
    assert.ok(killed.requests.length > 0, 'used again');
  });

  test('a router whose only provider is unhealthy is hidden from /v1/models (when asked) and answers 502 naming why', async (t) => {
    const [sick] = await backends(t, 1);
    sick!.healthStatus(500);
    const gw = await gateway(
      t,
      {
        models: [
          {
            id: 'lonely',
            type: 'text-generation',
            providers: [
              {
                model: 'm',
                type: 'vllm',
                id: 'lonely-0',
                args: { api_url: sick!.url },
                health_check: { interval_seconds: 1, unhealthy_after: 1 },
              },
            ],
          },
          { id: 'other', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
        ],
      },
      { hideUnavailableModels: true },
    );
    await eventually(async () => (await providerLive(gw, 'lonely-0')).healthy === false, 'the probe fails');

    const models = (await gw.get('/v1/models')).body.data.map((m: { id: string }) => m.id);
    assert.deepEqual(models, ['other']);
    assert.equal((await gw.get('/v1/models/lonely')).status, 200, 'still found by its name');
    const answer = await chat(gw, 'lonely');
    assert.equal(answer.status, 502);
    assert.match(answer.body.error.message, /failing its health checks/);
    assert.equal(sick!.requests.length, 0);
  });

  for (const shared of ['redis', 'cluster'] as const)
    test(`with Redis, one gateway probes each provider and every gateway follows its verdict (${SHARED[shared]})`, async (t) => {
      const [sick, well] = await backends(t, 2);
      const checks = { health_check: { interval_seconds: 1, unhealthy_after: 1 } };
      const config = twoProviders(sick!, well!, checks, { flaky: 'probed', steady: 'probed-ok' });
      const a = await gateway(t, config, {}, shared);
      const b = await gateway(t, config, {}, shared);
      sick!.healthStatus(503);
      await eventually(
        async () => (await providerLive(a, 'probed')).healthy === false && (await providerLive(b, 'probed')).healthy === false,
        'both gateways take it out',
      );
      await eventually(() => sick!.healthProbes >= 4, 'a few probe intervals');
      const probesBy = async (gw: TestGateway) =>
        Number(
          (await gw.get('/metrics')).body.match(/tollgate_health_checks_total\{router="chat",provider="probed",result="[a-z]+"\} (\d+)/g)
            ?.length ?? 0,
        );
      const ran = [await probesBy(a), await probesBy(b)];
      assert.equal(ran.filter((n) => n > 0).length, 1, `one gateway ran the probes (series per gateway: ${ran.join(', ')})`);
      for (let i = 0; i < 4; i++) assert.equal((await chat(b, 'chat')).status, 200);
      assert.equal(sick!.requests.length, 0);
    });
});

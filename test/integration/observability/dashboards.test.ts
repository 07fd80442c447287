// The chart's Grafana dashboard and alerts on a real Prometheus scraping a real gateway (on
// Redis, in queue mode for one router): after traffic of every kind the dashboard shows, each of
// the dashboard's queries returns numbers, and the alerts fire in the situations they describe
// (a router whose only backend is down, a budget run out, a queue past its wait, Redis stopped).
// The gateway's side of the operator's panels is in test/e2e/operator.test.ts; every alert's
// timing is in test/e2e/chart/alert-rules.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { CHART } from '../../support/helm.ts';
import { startPrometheus, type ActiveAlert, type RunningPrometheus } from '../../support/prometheus.ts';
import { testBed, type BedGateway } from '../../support/test-bed.ts';
import { eventually } from '../../support/eventually.ts';
import { CONVERGE_MS } from '../../support/patience.ts';
import { drawDashboard } from '../../support/dashboard-picture.ts';
import { dashboardQueries, readDashboard } from '../../support/dashboard.ts';

/** Where the tests' pictures go (as the Playground's screenshots). */
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', 'test-output', 'screenshots');
import type { ModelEntry } from '../../support/gateway-config.ts';

const bed = testBed({ redis: true });
const RULES = join(CHART, 'alerts/tollgate-rules.yaml');
/** Panels of the operator alone (test/e2e/operator.test.ts runs them): no operator runs here. */
const OPERATOR_METRICS = /tollgate_operator_/;

const keys = { alice: generateKey().secret, dave: generateKey().secret };
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const HELLO = [{ role: 'user', content: 'Hello' }];

describe('the dashboard and the alerts, on Prometheus scraping a gateway', () => {
  let good: FakeBackend;
  let slow: FakeBackend;
  let gw: BedGateway;
  let prometheus: RunningPrometheus;

  const priced = (id: string, completion: number, fields: Partial<ModelEntry>): ModelEntry => ({
    id,
    type: 'text-generation',
    costs: { prompt_tokens: 1000, completion_tokens: completion },
    providers: [{ model: 'upstream', type: 'vllm', args: { api_url: good.url } }],
    ...fields,
  });

  let startedAt: number;

  before(async () => {
    good = await startFakeOpenAI();
    slow = await startFakeOpenAI();
    gw = await bed.gateway(
      {
        teams: [{ id: 'search', name: 'Search' }],
        users: [
          { id: 'alice', name: 'Alice', team: 'search', budget: 100, keys: [{ name: 'a', key: keys.alice }] },
          // Dave's budget runs out on his first answer, which costs more than it had room for.
          { id: 'dave', name: 'Dave', team: 'search', budget: '0.02', budget_alerts: [50, 100], keys: [{ name: 'd', key: keys.dave }] },
        ],
        models: [
          priced('chat', 1000, {
            providers: [
              {
                model: 'upstream',
                type: 'vllm',
                args: { api_url: good.url },
                health_check: { interval_seconds: 1, timeout_seconds: 1 },
              },
            ],
          }),
          priced('over', 0, {}),
          // Its only backend is down (nothing listens there): its first request finds it so and opens
          // its breaker; its requests go to chat.
          priced('down', 1000, {
            fallbacks: ['chat'],
            providers: [
              {
                model: 'upstream',
                type: 'vllm',
                args: { api_url: 'http://127.0.0.1:1' },
              },
            ],
          }),
          {
            id: 'queued',
            type: 'text-generation',
            routing_mode: 'queue',
            queue: { max_wait_seconds: 0.3 },
            providers: [{ model: 'upstream', type: 'vllm', max_concurrent: 1, args: { api_url: slow.url } }],
          },
        ],
      },
      { settings: { routerWorkers: 1, failureThreshold: 1, cooldownSeconds: 600 } },
    );
    prometheus = await startPrometheus({ targets: [new URL(gw.url).host], ruleFiles: [RULES] });
    // The pictures' time range starts with Prometheus' first scrape.
    startedAt = Math.floor(Date.now() / 1000);
  });
  after(async () => {
    await prometheus?.stop();
    await gw?.close();
    await good?.close();
    await slow?.close();
  });

  /** A round of every kind of traffic the dashboard shows; each round ends with a scrape of it. */
  async function traffic(round: number): Promise<void> {
    const chat = (key: string, model: string, fields: object = {}) =>
      gw.post('/v1/chat/completions', { model, messages: HELLO, ...fields }, as(key));
    assert.equal((await chat(keys.alice, 'chat')).status, 200);
    assert.equal((await chat(keys.alice, 'chat', { stream: true })).status, 200);
    assert.equal((await chat(keys.alice, 'down')).status, 200, 'served by its fallback');
    if (round === 0) {
      // The hold covers Dave's prompt as counted; the backend reports 60 tokens: 0.06 against 0.02 of room.
      good.once({ usage: { prompt_tokens: 60, completion_tokens: 5 } });
      assert.equal((await chat(keys.dave, 'over', { max_tokens: 5 })).status, 200);
    }
    assert.equal((await chat(keys.dave, 'over', { max_tokens: 5 })).status, 402);
    // Queue mode: one request holds the only slot; the next waits past 0.3 s and is refused as busy.
    let open!: () => void;
    slow.once({ until: new Promise((resolve) => (open = () => resolve(undefined))) });
    const seen = slow.requests.length;
    let holding = chat(keys.alice, 'queued');
    // On a busy machine the holder itself may wait past 0.3 s for the worker: refused, it asks again.
    while (slow.requests.length === seen) {
      const early = await Promise.race([holding, sleep(20)]);
      if (early === undefined) continue;
      assert.equal(early.status, 503);
      holding = chat(keys.alice, 'queued');
    }
    const refused = await chat(keys.alice, 'queued');
    assert.equal(refused.status, 503);
    open();
    assert.equal((await holding).status, 200);
    const done = Date.now();
    await eventually(() => prometheus.scrapedSince(done), 'a scrape after the round', { timeoutMs: CONVERGE_MS });
  }

  it('returns numbers for every query of the dashboard', async () => {
    await traffic(0);
    await traffic(1);
    const queries = dashboardQueries(await readDashboard(), { $__rate_interval: '1m', $__range: '5m', $router: '.*' }).filter(
      (q) => !OPERATOR_METRICS.test(q.expr),
    );
    assert.ok(queries.length >= 25, `${queries.length} queries`);
    for (const { panel, expr } of queries) {
      // What the gateway reports at scrape time (a breaker opened, an alert delivered) is a scrape away.
      const samples = await eventually(
        async () => {
          const result = await prometheus.query(expr);
          return result.some((sample) => Number.isFinite(Number(sample.value[1]))) ? result : undefined;
        },
        `"${panel}": ${expr} returns a number`,
        { timeoutMs: CONVERGE_MS },
      );
      assert.ok(samples.length > 0);
    }
  });

  it('draws every panel of the dashboard (the picture in docs/observability.md)', async () => {
    const dashboard = await readDashboard();
    await mkdir(SCREENSHOTS, { recursive: true });
    const end = Math.ceil(Date.now() / 1000);
    const drawn = await drawDashboard(
      dashboard,
      prometheus,
      { start: startedAt, end },
      { $__rate_interval: '30s', $__range: `${end - startedAt}s`, $router: '.*' },
      join(SCREENSHOTS, 'dashboard-tollgate-overview.png'),
    );
    const operatorPanels = new Set(
      dashboard.panels.filter((p) => p.targets?.some((t) => OPERATOR_METRICS.test(t.expr))).map((p) => p.title),
    );
    assert.deepEqual(
      drawn.filter((panel) => panel.series === 0 && !operatorPanels.has(panel.title)).map((panel) => panel.title),
      [],
      'panels that drew nothing',
    );
  });

  it("shows the team's spend, the budget run out and Redis reachable", async () => {
    const [spend] = await prometheus.query('sum by (team) (tollgate_team_cost_total)');
    assert.equal(spend?.metric.team, 'search');
    assert.ok(Number(spend.value[1]) > 0.06, `search spent ${spend.value[1]}`);
    const budgets = await prometheus.query('max by (level, id) (tollgate_budget_used_ratio) >= 0.5');
    assert.deepEqual(
      budgets.map((s) => [s.metric.level, s.metric.id, s.value[1]]),
      [['user', 'dave', '1']],
    );
    const [redis] = await prometheus.query('min(tollgate_store_up{store="redis"})');
    assert.equal(redis?.value[1], '1');
  });

  const active = (alerts: ActiveAlert[], name: string, labels: Record<string, string> = {}) =>
    alerts.find((a) => a.labels.alertname === name && Object.entries(labels).every(([k, v]) => a.labels[k] === v));

  it('raises the alerts of a router whose only backend is down, a budget run out and a queue past its wait, and no other', async () => {
    // An alert with a `for` is pending first: its expression holds, and it fires once it has held that long.
    const alerts = await eventually(
      async () => {
        const now = await prometheus.alerts();
        const raised =
          active(now, 'TollgateRouterDown', { router: 'down' }) &&
          active(now, 'TollgateBreakerOpen', { router: 'down' }) &&
          active(now, 'TollgateBudgetExhausted', { level: 'user', id: 'dave' })?.state === 'firing' &&
          active(now, 'TollgateQueuePastItsWait', { router: 'queued' })?.state === 'firing';
        return raised ? now : undefined;
      },
      'the four alerts raised',
      { timeoutMs: CONVERGE_MS },
    );
    assert.deepEqual(alerts.map((a) => `${a.labels.alertname}{${a.labels.router ?? a.labels.id}}`).sort(), [
      'TollgateBreakerOpen{down}',
      'TollgateBudgetExhausted{dave}',
      // Half of the requests to `queued` were refused.
      'TollgateHighErrorRate{queued}',
      'TollgateQueuePastItsWait{queued}',
      'TollgateRouterDown{down}',
    ]);
  });

  it('raises TollgateRedisUnreachable once Redis stops answering', async () => {
    await bed.redis.stop();
    try {
      const alert = await eventually(
        async () => active(await prometheus.alerts(), 'TollgateRedisUnreachable'),
        'TollgateRedisUnreachable raised',
        { timeoutMs: CONVERGE_MS },
      );
      assert.equal(alert.labels.instance, new URL(gw.url).host);
      assert.equal(alert.labels.severity, 'critical');
    } finally {
      await bed.redis.restart();
    }
  });
});

// The chart's alerts (charts/tollgate/alerts/tollgate-rules.yaml) run by Prometheus' own rule
// engine (`promtool test rules`) over series as the gateways and the operator export them: each
// alert fires in the situation it describes, after its `for`, and stays quiet in the situation
// next to it. test/integration/observability/dashboards.test.ts fires some of them live, from
// real gateways scraped by a real Prometheus.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { CHART } from '../../support/helm.ts';

const RULES = join(CHART, 'alerts/tollgate-rules.yaml');

interface Rule {
  readonly alert: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

/** A series as Prometheus' unit tests write it: its selector and its values, one per minute (`0+1x30`: 0, 1, ..., 30). */
type Series = readonly [series: string, values: string];

interface Case {
  readonly alert: string;
  readonly what: string;
  readonly series: readonly Series[];
  /** When the alert is looked at (`20m`). */
  readonly at: string;
  /** The labels of each alert expected to fire then (none: it must be quiet). */
  readonly firing: readonly Record<string, string>[];
}

const breaker = (provider: string, values: string, router = 'chat'): Series => [
  `tollgate_provider_breaker_state{instance="gw-1",router="${router}",provider="${provider}"}`,
  values,
];

const CASES: readonly Case[] = [
  {
    alert: 'TollgateRedisUnreachable',
    what: 'a gateway whose store has not answered for a minute',
    series: [
      ['tollgate_store_up{instance="gw-1",store="redis"}', '1 1 0 0 0 0'],
      ['tollgate_store_up{instance="gw-2",store="redis"}', '1 1 1 1 1 1'],
    ],
    at: '5m',
    firing: [{ instance: 'gw-1', store: 'redis' }],
  },
  {
    alert: 'TollgateRedisUnreachable',
    what: 'a blip shorter than a minute, and gateways on the in-memory store',
    series: [
      ['tollgate_store_up{instance="gw-1",store="redis"}', '1 1 0 1 1 1'],
      ['tollgate_store_up{instance="gw-3",store="memory"}', '1 1 1 1 1 1'],
    ],
    at: '5m',
    firing: [],
  },
  {
    alert: 'TollgateRouterDown',
    what: "a router whose providers' breakers are open, one of them half-open on probes",
    series: [breaker('a', '0 2 2 2 2 2'), breaker('b', '0 2 1 2 1 2'), breaker('c', '0 0 0 0 0 0', 'other')],
    at: '5m',
    firing: [{ router: 'chat' }],
  },
  {
    alert: 'TollgateRouterDown',
    what: 'a provider down by its health checks, the other by its breaker',
    series: [
      breaker('a', '0 0 0 0 0 0'),
      ['tollgate_provider_healthy{instance="gw-1",router="chat",provider="a"}', '1 0 0 0 0 0'],
      breaker('b', '0 2 2 2 2 2'),
    ],
    at: '5m',
    firing: [{ router: 'chat' }],
  },
  {
    alert: 'TollgateRouterDown',
    what: 'one provider of two still up',
    series: [breaker('a', '0 2 2 2 2 2'), breaker('b', '0 0 0 0 0 0')],
    at: '5m',
    firing: [],
  },
  {
    alert: 'TollgateBreakerOpen',
    what: 'a breaker open or half-open for 15 minutes',
    series: [breaker('a', '0 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2'), breaker('b', '0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2 0 2')],
    at: '19m',
    firing: [{ router: 'chat', provider: 'a' }],
  },
  {
    alert: 'TollgateQueuePastItsWait',
    what: 'requests refused as too busy',
    series: [
      ['tollgate_queue_rejections_total{instance="gw-1",router="chat",reason="busy"}', '0 0 0 3 5 5'],
      ['tollgate_queue_rejections_total{instance="gw-1",router="other",reason="none"}', '0 1 2 3 4 5'],
    ],
    at: '5m',
    firing: [{ router: 'chat' }],
  },
  {
    alert: 'TollgateQueuePastItsWait',
    what: 'the last refusal more than 5 minutes ago',
    series: [['tollgate_queue_rejections_total{instance="gw-1",router="chat",reason="busy"}', '0 3 3 3 3 3 3 3 3 3 3 3 3']],
    at: '12m',
    firing: [],
  },
  {
    alert: 'TollgateBudgetExhausted',
    what: 'a budget run out, told by one of two gateways',
    series: [
      ['tollgate_budget_used_ratio{instance="gw-1",level="team",id="search"}', '0.8 1 1'],
      ['tollgate_budget_used_ratio{instance="gw-2",level="user",id="alice"}', '0.9 0.95 0.95'],
    ],
    at: '2m',
    firing: [{ level: 'team', id: 'search' }],
  },
  {
    alert: 'TollgateHighErrorRate',
    what: 'one request in ten failing for 10 minutes',
    series: [
      ['tollgate_requests_total{instance="gw-1",router="chat",status="200"}', '0+90x20'],
      ['tollgate_requests_total{instance="gw-1",router="chat",status="503"}', '0+10x20'],
      ['tollgate_requests_total{instance="gw-1",router="fine",status="200"}', '0+99x20'],
      ['tollgate_requests_total{instance="gw-1",router="fine",status="502"}', '0+1x20'],
    ],
    at: '20m',
    firing: [{ router: 'chat' }],
  },
  {
    alert: 'TollgateOperatorNotReconciling',
    what: 'every reconcile failing',
    series: [['tollgate_operator_reconciles_total{instance="op-1",kind="router",result="error"}', '0+1x30']],
    at: '20m',
    firing: [{}],
  },
  {
    alert: 'TollgateOperatorNotReconciling',
    what: 'some reconciles failing, others done',
    series: [
      ['tollgate_operator_reconciles_total{instance="op-1",kind="router",result="error"}', '0+1x30'],
      ['tollgate_operator_reconciles_total{instance="op-1",kind="user",result="ok"}', '0+1x30'],
    ],
    at: '20m',
    firing: [],
  },
  {
    alert: 'TollgateOperatorNoLeader',
    what: 'no replica leading for 10 minutes',
    series: [
      ['tollgate_operator_leader{instance="op-1"}', '1 0 0 0 0 0 0 0 0 0 0 0 0 0'],
      ['tollgate_operator_leader{instance="op-2"}', '0 0 0 0 0 0 0 0 0 0 0 0 0 0'],
    ],
    at: '13m',
    firing: [{}],
  },
  {
    alert: 'TollgateOperatorNoLeader',
    what: 'the lease passed from one replica to the other',
    series: [
      ['tollgate_operator_leader{instance="op-1"}', '1 1 1 0 0 0 0 0 0 0 0 0 0 0'],
      ['tollgate_operator_leader{instance="op-2"}', '0 0 0 0 1 1 1 1 1 1 1 1 1 1'],
    ],
    at: '13m',
    firing: [],
  },
];

/** An annotation as Prometheus fills it for an alert of these labels. */
const fill = (template: string, labels: Record<string, string>) =>
  template.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_all, name: string) => labels[name] ?? '');

const run = promisify(execFile);

describe('charts/tollgate: the alerts, on Prometheus rule engine', () => {
  let dir: string;
  let rules: Map<string, Rule>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tollgate-rules-'));
    const file = load(await readFile(RULES, 'utf8')) as { groups: { rules: Rule[] }[] };
    rules = new Map(file.groups.flatMap((g) => g.rules).map((r) => [r.alert, r]));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has a firing case and a quiet one for every alert of the file', () => {
    for (const alert of rules.keys()) {
      assert.ok(
        CASES.some((c) => c.alert === alert && c.firing.length > 0),
        `${alert} fires in a case`,
      );
    }
    assert.deepEqual(
      CASES.map((c) => c.alert).filter((alert) => !rules.has(alert)),
      [],
      'cases of alerts the file has',
    );
  });

  for (const c of CASES) {
    it(`${c.alert}: ${c.firing.length > 0 ? 'fires on' : 'stays quiet on'} ${c.what}`, async () => {
      const rule = rules.get(c.alert)!;
      const test = {
        rule_files: [RULES],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: c.series.map(([series, values]) => ({ series, values })),
            alert_rule_test: [
              {
                eval_time: c.at,
                alertname: c.alert,
                exp_alerts: c.firing.map((labels) => ({
                  exp_labels: { ...labels, ...rule.labels },
                  exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, fill(v, labels)])),
                })),
              },
            ],
          },
        ],
      };
      const file = join(dir, `${c.alert}-${CASES.indexOf(c)}.json`);
      await writeFile(file, JSON.stringify(test));
      // promtool exits 1 with what it expected and what it got when the alert is not as expected.
      const outcome = await run('promtool', ['test', 'rules', file]).then(
        () => 'passed',
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
      assert.equal(outcome, 'passed');
    });
  }
});

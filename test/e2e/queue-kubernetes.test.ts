// Queue mode in Kubernetes mode, as a cluster runs it: a ModelRouter with spec.routingMode queue,
// ModelProviders with spec.maxConcurrent, a GatewayUser with spec.priority, one operator, two
// gateways and a router worker (the tollgate-router-worker service account, bound only to the
// chart's rules) reading the routers from the routing ConfigMap. Requests through both gateways
// respect each backend's cap fleet-wide, and `kubectl get modelrouters` shows the mode and the
// queue depth the operator writes into status.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import type { FakeBackend } from '../support/fake-server.ts';
import { getObject, until } from './support/poll.ts';
import { chat, readyVersion, startSystem, type System } from './support/system.ts';

const TEAM = 'team-q';

describe('queue mode in Kubernetes mode', () => {
  let system: System;
  const backends: FakeBackend[] = [];
  let key = '';

  const inTeam = (args: string[], input?: string) => system.kubectl(['-n', TEAM, ...args], input);
  const apply = (object: object) => inTeam(['apply', '-f', '-'], JSON.stringify(object));
  const operators = () => system.operators;

  before(async () => {
    for (let i = 0; i < 2; i++) backends.push(await startFakeOpenAI());
    for (const backend of backends) backend.behave({ delayMs: 50 });
    system = await startSystem({ operators: 1, gateways: 2, workers: 1 });
    await system.kubectl(['create', 'namespace', TEAM]);
  });
  after(async () => {
    await system?.stop();
    await Promise.all(backends.map((b) => b.close()));
  });

  it("serves a queue-mode router through both gateways within each provider's maxConcurrent, and kubectl shows its mode and queue", async () => {
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'queued', namespace: TEAM },
      spec: { type: 'text-generation', routingMode: 'queue', loadBalancingStrategy: 'least_busy', queue: { maxWaitSeconds: 60 } },
    });
    for (const [i, backend] of backends.entries()) {
      await apply({
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'ModelProvider',
        metadata: { name: `backend-${i}`, namespace: TEAM },
        spec: { routerRef: { name: 'queued' }, type: 'vllm', model: 'm', url: backend.url, maxConcurrent: 2 },
      });
    }
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'GatewayUser',
      metadata: { name: 'carol', namespace: TEAM },
      spec: { priority: 3 },
    });
    const secret = await until(
      () => getObject<{ data?: Record<string, string> }>(system.admin, 'secrets', TEAM, 'carol-api-key'),
      "carol's key Secret",
      operators(),
    );
    key = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    await until(
      async () => {
        const snapshot = await system.snapshot();
        const router = snapshot?.routers.find((r) => r.name === 'queued');
        if (router?.routing_mode !== 'queue' || snapshot!.providers.filter((p) => p.max_concurrent === 2).length !== 2) return undefined;
        const versions = await Promise.all(system.gateways.map((g) => readyVersion(g.url)));
        return versions.every((v) => v === snapshot!.version) || undefined;
      },
      'both gateways serve the queue-mode router and its capped providers',
      operators(),
    );
    // carol exists in Redis once the operator wrote her: her first request may come before.
    await until(
      async () => (await chat(system.gateways[0]!.url, key, 'queued')).status === 200 || undefined,
      'a first answer',
      operators(),
    );

    for (const backend of backends) backend.resetPeak();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(system.gateways[i % 2]!.url, key, 'queued')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]), JSON.stringify(answers.find((a) => a.status !== 200)?.body));
    for (const [i, backend] of backends.entries())
      assert.ok(backend.peakOpenRequests <= 2, `backend ${i} saw ${backend.peakOpenRequests} at once`);
    assert.equal(backends[0]!.peakOpenRequests + backends[1]!.peakOpenRequests, 4, 'both backends were used up to their caps');

    const routing = await fetch(`${system.gateways[1]!.url}/v1/admin/routing`, { headers: { authorization: `Bearer ${system.adminKey}` } });
    const live = (await routing.json()) as {
      routers: { name: string; routing_mode: string }[];
      providers: { router: string; max_concurrent: number }[];
    };
    assert.equal(live.routers.find((r) => r.name === 'queued')?.routing_mode, 'queue');
    assert.deepEqual(
      live.providers.filter((p) => p.router === 'queued').map((p) => p.max_concurrent),
      [2, 2],
    );

    // The operator writes the mode and the queue depth into status (every status period).
    const table = await until(
      async () => {
        const text = await inTeam(['get', 'modelrouters', 'queued']);
        const row = text.split('\n')[1]?.trim().split(/\s+/) ?? [];
        return row[3] === 'queue' && row[4] === '0' ? text : undefined;
      },
      'kubectl get modelrouters showing MODE queue and QUEUE 0',
      operators(),
    );
    assert.match(table.split('\n')[0]!, /MODE\s+QUEUE/);
    assert.match(await inTeam(['get', 'gatewayusers', 'carol', '-o', 'jsonpath={.spec.priority}']), /^3$/);
  });
});

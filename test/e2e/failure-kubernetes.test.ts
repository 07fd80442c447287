// Failure handling in Kubernetes mode, on a real API server: a ModelRouter's spec.fallbacks serve
// its requests while its backend is down, a fallback naming no router is left out with
// ResolvedRefs=False (FallbackRefused), and a ModelProvider whose health checks fail turns
// Ready=False with reason Unhealthy (the REASON column of kubectl get), its router's ready count
// following, and back to True when the backend answers again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import type { FakeBackend } from '../support/fake-server.ts';
import { getObject, until } from './support/poll.ts';
import { chat, readyVersion, startSystem, type System } from './support/system.ts';

const TEAM = 'team-f';

interface Conditioned {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[]; providers?: { ready: number } };
}
const conditionOf = (object: Conditioned | undefined, type: string) => object?.status?.conditions?.find((c) => c.type === type);

describe('failure handling in Kubernetes mode', () => {
  let system: System;
  let backend: FakeBackend;
  let key = '';

  const inTeam = (args: string[], input?: string) => system.kubectl(['-n', TEAM, ...args], input);
  const apply = (object: object) => inTeam(['apply', '-f', '-'], JSON.stringify(object));
  const operators = () => system.operators;
  const get = <T>(plural: string, name: string) => getObject<T>(system.admin, plural, TEAM, name);

  before(async () => {
    backend = await startFakeOpenAI();
    system = await startSystem({ operators: 1, gateways: 1 });
    await system.kubectl(['create', 'namespace', TEAM]);
  });
  after(async () => {
    await system?.stop();
    await backend?.close();
  });

  it('falls back across routers, refuses an unknown fallback, and shows a backend down in Ready', async () => {
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'primary', namespace: TEAM },
      spec: { type: 'text-generation', fallbacks: ['spare', 'nowhere'] },
    });
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'spare', namespace: TEAM },
      spec: { type: 'text-generation' },
    });
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelProvider',
      metadata: { name: 'vllm-a', namespace: TEAM },
      spec: {
        routerRef: { name: 'primary' },
        type: 'vllm',
        model: 'm',
        url: backend.url,
        retries: 0,
        healthCheck: { intervalSeconds: 1, unhealthyAfter: 1 },
      },
    });
    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelProvider',
      metadata: { name: 'sim', namespace: TEAM },
      spec: { routerRef: { name: 'spare' }, type: 'simulator', model: 'sim' },
    });
    await apply({ apiVersion: 'tollgate.dev/v1alpha1', kind: 'GatewayUser', metadata: { name: 'dora', namespace: TEAM }, spec: {} });
    const secret = await until(
      () => getObject<{ data?: Record<string, string> }>(system.admin, 'secrets', TEAM, 'dora-api-key'),
      "dora's key Secret",
      operators(),
    );
    key = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();

    // The unknown fallback is left out, and said so; the router is served without it.
    const refused = await until(
      async () => {
        const router = await get<Conditioned>('modelrouters', 'primary');
        return conditionOf(router, 'ResolvedRefs')?.reason === 'FallbackRefused' ? router : undefined;
      },
      'primary: ResolvedRefs=False, FallbackRefused',
      operators(),
    );
    assert.match(conditionOf(refused, 'ResolvedRefs')!.message, /fallback "nowhere" of router "primary" does not exist/);
    await until(
      async () => {
        const snapshot = await system.snapshot();
        const router = snapshot?.routers.find((r) => r.name === 'primary');
        if (router?.fallbacks.join() !== 'spare') return undefined;
        return (await readyVersion(system.gateways[0]!.url)) === snapshot!.version || undefined;
      },
      'the gateway serves primary with its fallback spare',
      operators(),
    );
    await until(
      async () => (await chat(system.gateways[0]!.url, key, 'primary')).status === 200 || undefined,
      'a first answer from primary',
      operators(),
    );

    // The backend fails its probes: out of primary, whose requests go to spare.
    backend.healthStatus(503);
    const down = await until(
      async () => {
        const provider = await get<Conditioned>('modelproviders', 'vllm-a');
        return conditionOf(provider, 'Ready')?.reason === 'Unhealthy' ? provider : undefined;
      },
      'vllm-a: Ready=False, Unhealthy',
      operators(),
    );
    assert.equal(conditionOf(down, 'Ready')!.status, 'False');
    assert.match(conditionOf(down, 'Ready')!.message, /health check failed: the backend answered 503/);
    const table = await inTeam(['get', 'modelproviders', 'vllm-a']);
    assert.match(table.split('\n')[0]!, /READY\s+REASON/);
    assert.match(table.split('\n')[1]!, /\bFalse\s+Unhealthy\b/);
    const router = await until(
      async () => {
        const r = await get<Conditioned>('modelrouters', 'primary');
        return r?.status?.providers?.ready === 0 ? r : undefined;
      },
      "primary's ready count follows",
      operators(),
    );
    assert.equal(conditionOf(router, 'Ready')?.reason, 'NoHealthyProviders');

    const requestsBefore = backend.requests.length;
    const answer = await chat(system.gateways[0]!.url, key, 'primary');
    assert.equal(answer.status, 200);
    assert.equal((answer.body as { model?: string }).model, 'spare', 'served by the fallback');
    assert.equal(backend.requests.length, requestsBefore, 'nothing sent to the backend that is down');

    // It answers again: back in, Ready=True.
    backend.healthStatus(200);
    await until(
      async () => conditionOf(await get<Conditioned>('modelproviders', 'vllm-a'), 'Ready')?.status === 'True' || undefined,
      'vllm-a: Ready=True again',
      operators(),
    );
    const again = await until(
      async () => {
        const a = await chat(system.gateways[0]!.url, key, 'primary');
        return (a.body as { model?: string }).model === 'primary' ? a : undefined;
      },
      'primary serves again',
      operators(),
    );
    assert.equal(again.status, 200);
  });
});

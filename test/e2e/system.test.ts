// The whole system, as the scenarios describe it: a real kube-apiserver with crds/ and
// the RBAC of charts/tollgate applied, one Redis, two operator processes (the tollgate-operator
// service account) and two gateway processes in Kubernetes mode (the tollgate-gateway service
// account), each bound only to the rules the chart renders. `kubectl apply -f
// examples/kubernetes/` is served by both gateways (how soon is measured by bench/kubernetes.ts,
// not asserted here); a chat request debits the example user and shows in
// `kubectl get gatewayusers`; a deleted provider gets no more requests; an invalid provider is
// refused while the rest serves; the leading operator is SIGKILLed and the other one carries a
// later change to both gateways; a rotated provider key is used for the next requests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import type { FakeBackend } from '../support/fake-server.ts';
import { getObject, until, type Conditioned } from './support/poll.ts';
import { chat, readyVersion, repoPath, startSystem, type System } from './support/system.ts';

const TEAM = 'team-a';
const ROUTER = 'meta-llama/Llama-3.1-8B-Instruct';
const ALIAS = 'llama-8b';
const MODELPROVIDER = (name: string, spec: object) => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'ModelProvider',
  metadata: { name, namespace: TEAM },
  spec,
});

describe('the whole system: operators, gateways, kube-apiserver and Redis', () => {
  let system: System;
  let fake: FakeBackend;
  let aliceKey = '';

  const inTeam = (args: string[], input?: string) => system.kubectl(['-n', TEAM, ...args], input);
  const apply = (object: object) => inTeam(['apply', '-f', '-'], JSON.stringify(object));
  const get = <T>(plural: string, name: string) => getObject<T>(system.admin, plural, TEAM, name);
  const condition = (object: Conditioned | undefined, type: string) => object?.status?.conditions?.find((c) => c.type === type);
  const operators = () => system.operators;
  /** Every gateway serves the ConfigMap's current snapshot, and it satisfies `check`. */
  const gatewaysServe = (check: (providerIds: string[]) => boolean, what: string) =>
    until(
      async () => {
        const snapshot = await system.snapshot();
        if (!snapshot || !check(snapshot.providers.map((p) => p.id))) return undefined;
        const versions = await Promise.all(system.gateways.map((g) => readyVersion(g.url)));
        return versions.every((v) => v === snapshot.version) ? snapshot : undefined;
      },
      what,
      operators(),
    );
  /** A chat request through `gateway` until it answers 200 (a provider may be briefly unreachable). */
  const chatOk = (url: string, key: string, model: string) =>
    until(
      async () => {
        const answer = await chat(url, key, model);
        return answer.status === 200 ? answer : undefined;
      },
      `a 200 from ${url} for ${model}`,
      operators(),
    );

  before(async () => {
    fake = await startFakeOpenAI();
    system = await startSystem({ operators: 2, gateways: 2 });
    await system.kubectl(['create', 'namespace', TEAM]);
  });
  after(async () => {
    await system?.stop();
    await fake?.close();
  });

  it('serves the examples through both gateways after `kubectl apply -f examples/kubernetes/`', async () => {
    // The examples name no namespace: they go to the team's, as `kubectl -n team-a apply` puts them.
    await inTeam(['apply', '-f', repoPath('examples/kubernetes/')]);
    // Each gateway on its own answers 200 for the router, once the operators have published it.
    await Promise.all(system.gateways.map((g) => chatOk(g.url, system.adminKey, ROUTER)));
    const viaAlias = await Promise.all(system.gateways.map((g) => chat(g.url, system.adminKey, ALIAS)));
    // The alias too (a request may land on the example vLLM provider, whose address does not resolve here).
    for (const [i, g] of system.gateways.entries()) {
      if (viaAlias[i]!.status !== 200) await chatOk(g.url, system.adminKey, ALIAS);
    }
  });

  it("debits the example user for a chat request made with the key from the operator's Secret, and `kubectl get gatewayusers` shows it", async () => {
    const secret = await until(() => get<{ data?: Record<string, string> }>('secrets', 'alice-api-key'), "alice's key Secret", operators());
    aliceKey = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    assert.match(aliceKey, /^tg-/);
    // Point the example vLLM provider at the fake backend, so every request answers.
    await inTeam(['patch', 'modelprovider', 'llama-vllm', '--type', 'merge', '-p', JSON.stringify({ spec: { url: fake.url } })]);
    await gatewaysServe((ids) => ids.includes('team-a-llama-vllm'), 'the patched provider served');
    await until(
      async () => {
        const snapshot = await system.snapshot();
        return (
          snapshot?.providers.find((p) => p.id === 'team-a-llama-vllm')?.type === 'vllm' &&
          (snapshot.providers.find((p) => p.id === 'team-a-llama-vllm') as { url?: string }).url === fake.url
        );
      },
      'the snapshot with the fake URL',
      operators(),
    );

    const answers = [];
    for (const gateway of system.gateways) answers.push(await chatOk(gateway.url, aliceKey, ROUTER));
    assert.ok(answers.every((a) => a.body.object === 'chat.completion'));

    const user = await until(
      async () => {
        const found = await get<Conditioned>('gatewayusers', 'alice');
        return found?.status?.requests === answers.length && Number(found.status.spent) > 0 ? found : undefined;
      },
      'the requests and spent amount in status',
      operators(),
    );
    const spent = user.status!.spent!;
    assert.equal(Number(user.status!.remaining), 25 - Number(spent));
    const table = await inTeam(['get', 'gatewayusers']);
    const row = table.split('\n').find((line) => line.startsWith('alice '));
    assert.ok(row, table);
    assert.deepEqual(row.trim().split(/\s+/).slice(1, 4), ['25.00', spent, user.status!.remaining], `kubectl get gatewayusers:\n${table}`);
  });

  it("charges a team's users to the team too: `kubectl get gatewayteams` shows what both members spent", async () => {
    const bob = {
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'GatewayUser',
      metadata: { name: 'bob', namespace: TEAM },
      spec: { teamRef: { name: 'research' } },
    };
    await apply(bob);
    const secret = await until(() => get<{ data?: Record<string, string> }>('secrets', 'bob-api-key'), "bob's key Secret", operators());
    const bobKey = Buffer.from(secret.data?.['api-key'] ?? '', 'base64').toString();
    await chatOk(system.gateways[0]!.url, bobKey, ROUTER);
    await chatOk(system.gateways[1]!.url, aliceKey, ROUTER);
    type Spending = Conditioned & { status?: { spent?: string; remaining?: string; members?: number } };
    const spentOf = async (plural: string, name: string) => Number((await get<Spending>(plural, name))?.status?.spent ?? 0);
    const team = await until(
      async () => {
        const found = await get<Spending>('gatewayteams', 'research');
        const users = (await spentOf('gatewayusers', 'alice')) + (await spentOf('gatewayusers', 'bob'));
        const bobSpent = await spentOf('gatewayusers', 'bob');
        return found?.status?.members === 2 && bobSpent > 0 && Math.abs(Number(found.status.spent) - users) < 1e-9 ? found : undefined;
      },
      "the team's spent, the sum of its two members'",
      operators(),
    );
    assert.equal(condition(team, 'Ready')?.status, 'True');
    assert.equal(Number(team.status!.remaining), 500 - Number(team.status!.spent));
    const table = await inTeam(['get', 'gatewayteams']);
    const row = table.split('\n').find((line) => line.startsWith('research '));
    assert.ok(row, table);
    assert.deepEqual(
      row.trim().split(/\s+/).slice(1, 5),
      ['500.00', team.status!.spent, team.status!.remaining, '2'],
      `kubectl get gatewayteams:\n${table}`,
    );
  });

  it('sends nothing more to a deleted provider', async () => {
    // The fake gets requests while the provider exists.
    const before = fake.requests.length;
    await until(
      async () => {
        for (const gateway of system.gateways) assert.equal((await chat(gateway.url, aliceKey, ROUTER)).status, 200);
        return fake.requests.length > before;
      },
      'a request reaching the fake backend',
      operators(),
    );

    await inTeam(['delete', 'modelprovider', 'llama-vllm']);
    await gatewaysServe(
      (ids) => !ids.includes('team-a-llama-vllm') && ids.includes('team-a-llama-simulator'),
      'both gateways serving the snapshot without llama-vllm',
    );
    const count = fake.requests.length;
    for (let i = 0; i < 10; i++) {
      for (const gateway of system.gateways) {
        const answer = await chat(gateway.url, aliceKey, ROUTER);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
      }
    }
    assert.equal(fake.requests.length, count, 'no request reached the deleted provider');
  });

  it('refuses an invalid provider with Accepted=False and a reason while the others keep serving', async () => {
    await apply(MODELPROVIDER('bad-vllm', { routerRef: { name: 'llama-3-1-8b' }, type: 'vllm', model: 'm' }));
    const accepted = await until(
      async () => {
        const found = condition(await get<Conditioned>('modelproviders', 'bad-vllm'), 'Accepted');
        return found?.status === 'False' ? found : undefined;
      },
      'bad-vllm judged',
      operators(),
    );
    assert.equal(accepted.reason, 'InvalidSpec');
    assert.match(accepted.message, /spec\.url: is required for type "vllm"/);
    const snapshot = await gatewaysServe((ids) => ids.includes('team-a-llama-simulator'), 'the gateways serving the current snapshot');
    assert.ok(!snapshot.providers.some((p) => p.id === 'team-a-bad-vllm'));
    for (const gateway of system.gateways) {
      for (let i = 0; i < 3; i++) assert.equal((await chat(gateway.url, aliceKey, ROUTER)).status, 200);
    }
    const router = await get<Conditioned>('modelrouters', 'llama-3-1-8b');
    assert.equal(condition(router, 'Accepted')?.status, 'True');
  });

  it('when the leading operator is SIGKILLed, the other takes over and a later change reaches both gateways', async () => {
    const leader = await until(() => system.leaseHolder(), 'a Lease holder', operators());
    const leading = system.operators.find((o) => o.identity === leader);
    const other = system.operators.find((o) => o.identity !== leader);
    assert.ok(leading && other, `the Lease is held by ${leader}`);
    await leading.kill();

    await apply({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'after-kill', namespace: TEAM },
      spec: { name: 'after-kill', type: 'text-generation' },
    });
    await apply(MODELPROVIDER('after-kill-sim', { routerRef: { name: 'after-kill' }, type: 'simulator', model: 'sim' }));
    for (const gateway of system.gateways) await chatOk(gateway.url, system.adminKey, 'after-kill');
    assert.equal(await system.leaseHolder(), other.identity);
    // Nothing lost: the example router and the example user still work on both gateways.
    for (const gateway of system.gateways) {
      assert.equal((await chat(gateway.url, aliceKey, ROUTER)).status, 200);
      assert.equal(
        (await chat(gateway.url, aliceKey, 'after-kill')).body.error?.code,
        'model_not_allowed',
        'alice is still limited to her router',
      );
    }
  });

  it('uses a rotated provider key Secret for the next requests', async () => {
    // The example vLLM provider again, at the fake backend, alone on its router, so every request reaches it.
    await inTeam(['delete', 'modelprovider', 'llama-simulator', 'bad-vllm']);
    await apply(
      MODELPROVIDER('llama-vllm', {
        routerRef: { name: 'llama-3-1-8b' },
        type: 'vllm',
        model: 'meta-llama/Llama-3.1-8B-Instruct',
        url: fake.url,
        apiKeySecretRef: { name: 'vllm-api-key', key: 'api-key' },
      }),
    );
    await gatewaysServe(
      (ids) => JSON.stringify(ids.filter((id) => id.startsWith('team-a-llama'))) === '["team-a-llama-vllm"]',
      'only llama-vllm on the router',
    );
    for (const key of ['replace-me', 'rotated-1', 'rotated-2']) {
      if (key !== 'replace-me')
        await apply({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'vllm-api-key', namespace: TEAM },
          type: 'Opaque',
          stringData: { 'api-key': key },
        });
      for (const gateway of system.gateways) {
        await until(
          async () => {
            assert.equal((await chat(gateway.url, aliceKey, ROUTER)).status, 200);
            return fake.requests.at(-1)?.headers.authorization === `Bearer ${key}`;
          },
          `${gateway.url} sending the key ${key}`,
          operators(),
        );
        // And the next requests too.
        for (let i = 0; i < 3; i++) {
          assert.equal((await chat(gateway.url, aliceKey, ROUTER)).status, 200);
          assert.equal(fake.requests.at(-1)?.headers.authorization, `Bearer ${key}`);
        }
      }
    }
  });
});

// What the operator makes of the routers, providers and Secrets it sees: the snapshot the
// gateways serve, the keys they use, and each resource's conditions. One bad resource never
// stops the others from being served.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { computeRouting, type Resource } from '../../../operator/reconcile/desired-routing.ts';

const router = (name: string, spec: Record<string, unknown> = {}, created = '2026-11-01T00:00:00Z', namespace = 'team'): Resource => ({
  metadata: { name, namespace, generation: 1, creationTimestamp: created },
  spec: { type: 'text-generation', costs: { promptTokens: '0.15', completionTokens: '0.6' }, ...spec },
});
const provider = (name: string, routerName: string, spec: Record<string, unknown> = {}, namespace = 'team'): Resource => ({
  metadata: { name, namespace, generation: 1, creationTimestamp: '2026-11-02T00:00:00Z' },
  spec: { routerRef: { name: routerName }, type: 'simulator', model: 'sim', ...spec },
});
const noSecrets = new Map<string, Record<string, string>>();
const conditionOf = (conditions: { type: string; status: string; reason: string; message: string }[], type: string) =>
  conditions.find((c) => c.type === type);

describe('computeRouting', () => {
  test('valid routers and providers are served, with their counts and Ready conditions', () => {
    const outcome = computeRouting([router('chat', { aliases: ['c'] })], [provider('a', 'chat'), provider('b', 'chat')], noSecrets);
    assert.deepEqual(
      outcome.snapshot.routers.map((r) => [r.name, r.aliases]),
      [['chat', ['c']]],
    );
    assert.deepEqual(
      outcome.snapshot.providers.map((p) => p.id),
      ['team-a', 'team-b'],
    );
    const chat = outcome.routers.get('team/chat')!;
    assert.deepEqual(chat.providers, { ready: 2, total: 2 });
    assert.equal(conditionOf(chat.conditions, 'Ready')?.status, 'True');
    assert.equal(conditionOf(outcome.providers.get('team/a')!.conditions, 'Ready')?.status, 'True');
  });

  test('a router whose fallback is unknown or closes a loop is served without it: ResolvedRefs=False, FallbackRefused', () => {
    const outcome = computeRouting(
      [
        router('small', { fallbacks: ['large', 'ghost'] }, '2026-11-01T00:00:00Z'),
        router('large', { fallbacks: ['small'] }, '2026-11-01T00:00:01Z'),
      ],
      [provider('a', 'small'), provider('b', 'large')],
      noSecrets,
    );
    assert.deepEqual(
      outcome.snapshot.routers.map((r) => [r.name, r.fallbacks]),
      [
        ['small', ['large']],
        ['large', []],
      ],
    );
    const small = conditionOf(outcome.routers.get('team/small')!.conditions, 'ResolvedRefs')!;
    assert.deepEqual([small.status, small.reason], ['False', 'FallbackRefused']);
    assert.match(small.message, /fallback "ghost" of router "small" does not exist; the router is served without that fallback/);
    const large = conditionOf(outcome.routers.get('team/large')!.conditions, 'ResolvedRefs')!;
    assert.match(large.message, /fallback "small" of router "large" would close a loop: large → small → large/);
    assert.equal(conditionOf(outcome.routers.get('team/small')!.conditions, 'Ready')?.status, 'True', 'both routers still serve');
    assert.equal(conditionOf(outcome.routers.get('team/large')!.conditions, 'Ready')?.status, 'True');
  });

  test('an invalid provider is left out with Accepted=False and the reason, and the others keep serving', () => {
    const outcome = computeRouting([router('chat')], [provider('good', 'chat'), provider('bad', 'chat', { type: 'vllm' })], noSecrets);
    assert.deepEqual(
      outcome.snapshot.providers.map((p) => p.id),
      ['team-good'],
    );
    const accepted = conditionOf(outcome.providers.get('team/bad')!.conditions, 'Accepted')!;
    assert.equal(accepted.status, 'False');
    assert.equal(accepted.reason, 'InvalidSpec');
    assert.match(accepted.message, /spec\.url: is required for type "vllm"/);
    assert.deepEqual(outcome.routers.get('team/chat')!.providers, { ready: 1, total: 2 });
  });

  test('a provider naming a router that does not exist is not served: ResolvedRefs=False', () => {
    const outcome = computeRouting([router('chat')], [provider('lost', 'nope')], noSecrets);
    assert.equal(outcome.snapshot.providers.length, 0);
    const resolved = conditionOf(outcome.providers.get('team/lost')!.conditions, 'ResolvedRefs')!;
    assert.deepEqual(
      [resolved.status, resolved.reason, resolved.message],
      ['False', 'RouterNotFound', 'ModelRouter team/nope does not exist'],
    );
    assert.equal(conditionOf(outcome.routers.get('team/chat')!.conditions, 'Ready')?.reason, 'NoReadyProviders');
  });

  test('a router in another namespace is not found: routerRef is namespaced', () => {
    const outcome = computeRouting([router('chat', {}, undefined, 'other')], [provider('p', 'chat')], noSecrets);
    assert.equal(outcome.snapshot.providers.length, 0);
  });

  test('a duplicate alias: the oldest router wins, the newer one says who has the name', () => {
    const outcome = computeRouting(
      [router('newer', { aliases: ['shared'] }, '2026-11-05T00:00:00Z'), router('older', { aliases: ['shared'] }, '2026-11-01T00:00:00Z')],
      [provider('a', 'older'), provider('b', 'newer')],
      noSecrets,
    );
    assert.deepEqual(
      outcome.snapshot.routers.map((r) => r.name),
      ['older'],
    );
    const accepted = conditionOf(outcome.routers.get('team/newer')!.conditions, 'Accepted')!;
    assert.deepEqual([accepted.status, accepted.reason], ['False', 'NameConflict']);
    assert.match(accepted.message, /"shared" is already used by ModelRouter team\/older/);
    assert.equal(
      conditionOf(outcome.providers.get('team/b')!.conditions, 'ResolvedRefs')?.message,
      'ModelRouter team/newer is not accepted',
    );
  });

  test('a router name clients call may differ from its Kubernetes name', () => {
    const outcome = computeRouting([router('llama', { name: 'meta-llama/Llama-3.1-8B' })], [provider('p', 'llama')], noSecrets);
    assert.equal(outcome.snapshot.providers[0]!.router, 'meta-llama/Llama-3.1-8B');
    assert.equal(outcome.routers.get('team/llama')!.publicName, 'meta-llama/Llama-3.1-8B');
  });

  test('keys come from the Secrets the providers name, and never enter the snapshot', () => {
    const secrets = new Map([['team/vllm-key', { token: 'sk-rotating' }]]);
    const outcome = computeRouting(
      [router('chat')],
      [provider('v', 'chat', { type: 'vllm', url: 'http://vllm:8000', apiKeySecretRef: { name: 'vllm-key', key: 'token' } })],
      secrets,
    );
    assert.deepEqual(outcome.keys, { 'team-v': 'sk-rotating' });
    assert.ok(!JSON.stringify(outcome.snapshot).includes('sk-rotating'));
  });

  test('a missing Secret, or a missing key in it, leaves the provider out with the reason', () => {
    const ref = (name: string) => ({ type: 'vllm', url: 'http://vllm:8000', apiKeySecretRef: { name, key: 'token' } });
    const outcome = computeRouting(
      [router('chat')],
      [provider('a', 'chat', ref('absent')), provider('b', 'chat', ref('wrong-key'))],
      new Map([['team/wrong-key', { other: 'x' }]]),
    );
    assert.equal(outcome.snapshot.providers.length, 0);
    assert.equal(conditionOf(outcome.providers.get('team/a')!.conditions, 'ResolvedRefs')?.message, 'Secret absent does not exist');
    assert.equal(conditionOf(outcome.providers.get('team/b')!.conditions, 'ResolvedRefs')?.message, 'Secret wrong-key has no key "token"');
  });

  test('the snapshot version changes with the content, not with the order resources arrive in', () => {
    const a = computeRouting([router('x'), router('y', {}, '2026-11-02T00:00:00Z')], [provider('p', 'x')], noSecrets);
    const b = computeRouting([router('y', {}, '2026-11-02T00:00:00Z'), router('x')], [provider('p', 'x')], noSecrets);
    const c = computeRouting([router('x'), router('y', { aliases: ['z'] }, '2026-11-02T00:00:00Z')], [provider('p', 'x')], noSecrets);
    assert.equal(a.snapshot.version, b.snapshot.version);
    assert.notEqual(a.snapshot.version, c.snapshot.version);
  });
});

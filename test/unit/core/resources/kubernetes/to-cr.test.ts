// From the gateway's resources to custom resources (what the admin API writes in Kubernetes
// mode): the object names derived from router names and provider ids, and that translating back
// (translate.ts) gives the same resource, so what the operator serves is what the API was given.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelProviderSpec, ModelRouterSpec, GatewayUserSpec } from '../../../../../core/resources/kubernetes/crd-schemas.ts';
import { ObjectName } from '../../../../../core/resources/kubernetes/kube-fields.ts';
import {
  providerFromCR,
  providerId,
  providerKeySecretName,
  providerObjectName,
  providerToCR,
  routerFromCR,
  routerObjectName,
  routerToCR,
  userFromCR,
  userToCR,
} from '../../../../../core/resources/kubernetes/translate.ts';
import { ProviderSpec } from '../../../../../core/resources/provider.ts';
import { RouterSpec } from '../../../../../core/resources/router.ts';
import { UserSpec } from '../../../../../core/resources/user.ts';

describe('routerObjectName', () => {
  test('a router name that is a Kubernetes object name is used as it is', () => {
    for (const name of ['chat', 'gpt-4o-mini', 'llama.3.1', '8b']) assert.equal(routerObjectName(name), name);
  });

  test('any other name is folded, with a hash that keeps distinct names apart', () => {
    const names = [
      'meta-llama/Llama-3.1-8B',
      'meta-llama/llama-3.1-8b',
      'Chat',
      'chat:latest',
      'a@b+c',
      '-x',
      'x'.repeat(128).toUpperCase(),
    ];
    const objects = names.map(routerObjectName);
    for (const [i, object] of objects.entries()) {
      assert.ok(ObjectName.safeParse(object).success, `${names[i]} -> ${object} is a valid object name`);
      assert.notEqual(object, names[i]);
    }
    assert.equal(new Set(objects).size, objects.length);
    assert.match(routerObjectName('meta-llama/Llama-3.1-8B'), /^meta-llama-llama-3-1-8b-[0-9a-f]{8}$/);
    assert.equal(routerObjectName('Chat'), routerObjectName('Chat'), 'stable');
  });
});

describe('providerObjectName', () => {
  test('the provider is served as <namespace>-<name>', () => {
    assert.equal(providerObjectName('tollgate', 'openai-1'), 'openai-1');
    assert.equal(providerId('tollgate', providerObjectName('tollgate', 'openai-1')), 'tollgate-openai-1');
  });

  test('an id that already starts with the namespace keeps its id', () => {
    assert.equal(providerObjectName('tollgate', 'tollgate-openai-1'), 'openai-1');
    assert.equal(providerId('tollgate', providerObjectName('tollgate', 'tollgate-openai-1')), 'tollgate-openai-1');
  });

  test('a long id is cut so that the served id stays a plain, valid id', () => {
    const id = `${'a'.repeat(60)}-b`;
    const name = providerObjectName('team-x', id);
    assert.equal(`team-x-${name}`.length, 63);
    assert.equal(providerId('team-x', name), `team-x-${name}`);
    assert.equal(providerObjectName('ns', `${'x'.repeat(60)}-y`), 'x'.repeat(60), 'no trailing dash');
  });

  test('the key Secret is named after the object', () => {
    assert.equal(providerKeySecretName('openai-1'), 'openai-1-api-key');
  });
});

describe('to a CR and back', () => {
  const meta = (name: string) => ({ name, namespace: 'tollgate' });

  test('a router, with and without spec.name', () => {
    for (const input of [
      { name: 'chat', type: 'text-generation' },
      {
        name: 'meta-llama/Llama-3.1-8B',
        type: 'text-generation',
        aliases: ['llama'],
        load_balancing_strategy: 'least_busy',
        costs: { prompt_tokens: '0.15', completion_tokens: '0.6' },
        max_context_length: 4096,
        max_completion_tokens: 512,
        rate_limits: { requests_per_minute: 10, tokens_per_day: 1000 },
      },
    ]) {
      const spec = RouterSpec.parse(input);
      const object = routerObjectName(spec.name);
      const cr = routerToCR(spec, object);
      assert.equal(cr.name, spec.name === object ? undefined : spec.name);
      assert.ok(ModelRouterSpec.safeParse(cr).success);
      assert.deepEqual(routerFromCR({ metadata: meta(object), spec: cr }), { ok: true, value: spec });
    }
  });

  test('a provider: the key is never in the spec, only a reference to its Secret', () => {
    for (const input of [
      {
        id: 'x',
        router: 'chat',
        type: 'vllm',
        model_name: 'm',
        url: 'http://vllm:8000',
        key: 'sk-secret',
        timeout: 30,
        carbon: { params_total_b: 8, zone: 'FRA' },
      },
      { id: 'x', router: 'chat', type: 'simulator', model_name: 'sim', simulator: { latency_ms: 5 } },
      { id: 'x', router: 'chat', type: 'openai', model_name: 'gpt-4o' },
    ]) {
      const spec = ProviderSpec.parse(input);
      const ref = spec.key ? { name: providerKeySecretName('p1'), key: 'api-key' } : undefined;
      const cr = providerToCR(spec, 'chat-object', ref);
      assert.ok(!JSON.stringify(cr).includes('sk-secret'));
      assert.deepEqual(cr.apiKeySecretRef, ref);
      assert.ok(ModelProviderSpec.safeParse(cr).success, JSON.stringify(ModelProviderSpec.safeParse(cr).error));
      const back = providerFromCR({ metadata: meta('p1'), spec: cr }, 'chat');
      const { key: _key, ...expected } = spec;
      assert.deepEqual(back, { ok: true, value: { ...expected, id: 'tollgate-p1' } });
    }
  });

  test('a user: the budget as a decimal string', () => {
    for (const input of [
      { id: 'alice', name: 'alice' },
      {
        id: 'bob',
        name: 'Bob B.',
        role: 'admin',
        budget: 25.5,
        budget_period: 'monthly',
        allowed_routers: ['chat'],
        rate_limits: { requests_per_day: 5 },
      },
    ]) {
      const spec = UserSpec.parse(input);
      const cr = userToCR(spec);
      assert.ok(GatewayUserSpec.safeParse(cr).success);
      if (spec.budget !== null) assert.equal(typeof cr.budget, 'string');
      assert.deepEqual(userFromCR({ metadata: meta(spec.id), spec: cr }), { ok: true, value: spec });
    }
  });
});

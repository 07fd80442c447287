// From custom resources to the gateway's resources: what each CR becomes, and each refusal with
// the CR field it names (the operator puts these in an Accepted=False condition).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import {
  describeProblems,
  providerFromCR,
  providerId,
  routerFromCR,
  userFromCR,
  teamFromCR,
  type CustomResource,
  type Translation,
} from '../../../../../core/resources/kubernetes/translate.ts';
import { ResourceId } from '../../../../../core/resources/fields.ts';

const metadata = (name: string) => ({ name, namespace: 'team-a', generation: 3, creationTimestamp: '2026-01-02T03:04:05Z' });
const cr = (name: string, spec: unknown): CustomResource => ({ metadata: metadata(name), spec });

/** The problems as `path: message` lines, or the value. */
function outcome<T>(translation: Translation<T>): T | string[] {
  return translation.ok ? translation.value : translation.problems.map((p) => describeProblems([p]));
}

interface Case {
  name: string;
  cr: CustomResource;
  expected: unknown;
}

describe('routerFromCR', () => {
  const cases: Case[] = [
    {
      name: "a type is enough: the name is metadata.name, and the defaults are the gateway's",
      cr: cr('chat', { type: 'text-generation' }),
      expected: {
        name: 'chat',
        type: 'text-generation',
        load_balancing_strategy: 'shuffle',
        aliases: [],
        fallbacks: [],
        costs: { prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0' },
        max_context_length: 8192,
      },
    },
    {
      name: 'every field, camelCase to snake_case; spec.name may hold what a Kubernetes name cannot',
      cr: cr('llama-8b', {
        name: 'meta-llama/Llama-3.1-8B',
        type: 'text-generation',
        aliases: ['llama'],
        loadBalancingStrategy: 'least_busy',
        costs: { promptTokens: '0.15', completionTokens: '0.600000001', audioMinutes: '0.006' },
        maxContextLength: 131072,
        maxCompletionTokens: 4096,
        rateLimits: { requestsPerMinute: 60, tokensPerDay: 1_000_000 },
        fallbacks: ['big-llama'],
        contextFallback: false,
      }),
      expected: {
        name: 'meta-llama/Llama-3.1-8B',
        type: 'text-generation',
        load_balancing_strategy: 'least_busy',
        aliases: ['llama'],
        fallbacks: ['big-llama'],
        context_fallback: false,
        costs: { prompt_tokens: '0.15', completion_tokens: '0.600000001', audio_minutes: '0.006' },
        max_context_length: 131072,
        max_completion_tokens: 4096,
        rate_limits: { requests_per_minute: 60, tokens_per_day: 1_000_000 },
      },
    },
    {
      name: 'a missing spec: the type is required',
      cr: { metadata: metadata('chat') },
      expected: ['spec.type: is required'],
    },
    {
      name: 'prices must be decimal strings with at most 9 decimals; numbers and negatives are refused',
      cr: cr('chat', { type: 'text-generation', costs: { promptTokens: '-0.1', completionTokens: 0.6 } }),
      expected: [
        'spec.costs.promptTokens: must be a non-negative decimal number written as a string, such as "0.15", with at most 9 decimal places',
        'spec.costs.completionTokens: Invalid input: expected string, received number',
      ],
    },
    {
      name: 'ten decimals are one too many',
      cr: cr('chat', { type: 'text-generation', costs: { promptTokens: '0.0000000001' } }),
      expected: [
        'spec.costs.promptTokens: must be a non-negative decimal number written as a string, such as "0.15", with at most 9 decimal places',
      ],
    },
    {
      name: 'an unknown type and an unknown field',
      cr: cr('chat', { type: 'chat', tempreature: 1 }),
      expected: [
        'spec.type: Invalid option: expected one of "text-generation"|"image-text-to-text"|"text-embeddings-inference"|"text-classification"|"automatic-speech-recognition"',
        'spec.tempreature: is not a field of this resource',
      ],
    },
    {
      name: 'bounds of the gateway resource hold here too',
      cr: cr('chat', { type: 'text-generation', maxContextLength: 0, rateLimits: { requestsPerDay: 0 } }),
      expected: [
        'spec.maxContextLength: Too small: expected number to be >0',
        'spec.rateLimits.requestsPerDay: Too small: expected number to be >=1',
      ],
    },
    {
      name: 'without spec.name, a metadata.name longer than a model name may be is reported on metadata.name',
      cr: cr('a'.repeat(129), { type: 'text-generation' }),
      expected: ['metadata.name: must be at most 128 characters'],
    },
  ];
  for (const { name, cr: resource, expected } of cases) {
    test(name, () => assert.deepEqual(outcome(routerFromCR(resource)), expected));
  }
});

describe('providerFromCR', () => {
  const router = 'meta-llama/Llama-3.1-8B';
  const base = { routerRef: { name: 'llama-8b' }, model: 'meta-llama/Llama-3.1-8B-Instruct' };
  const cases: Case[] = [
    {
      name: 'vllm: id from namespace and name, router by its called name, model, url without its trailing slash; the key stays out',
      cr: cr('vllm-a', {
        ...base,
        type: 'vllm',
        url: 'http://vllm.inference.svc:8000/',
        apiKeySecretRef: { name: 'vllm-key', key: 'api-key' },
        timeoutSeconds: 30,
        carbon: { paramsTotalB: 8, zone: 'FRA' },
      }),
      expected: {
        type: 'vllm',
        id: 'team-a-vllm-a',
        router,
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        url: 'http://vllm.inference.svc:8000',
        timeout: 30,
        carbon: { params_total_b: 8, zone: 'FRA', pue: 1.2 },
      },
    },
    {
      name: 'openai defaults its url; a custom emission factor allows any zone',
      cr: cr('openai', {
        ...base,
        type: 'openai',
        carbon: { paramsTotalB: 70, paramsActiveB: 12, zone: 'NOR', pue: 1.1, gwpKgPerKwh: 0.02 },
      }),
      expected: {
        type: 'openai',
        id: 'team-a-openai',
        router,
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        url: 'https://api.openai.com',
        carbon: { params_total_b: 70, params_active_b: 12, zone: 'NOR', pue: 1.1, gwp_kg_per_kwh: 0.02 },
      },
    },
    {
      name: 'simulator: its settings, camelCase to snake_case, defaults filled in',
      cr: cr('sim', { ...base, type: 'simulator', simulator: { latencyMs: 50, tokensPerSecond: 100 } }),
      expected: {
        type: 'simulator',
        id: 'team-a-sim',
        router,
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        simulator: { latency_ms: 50, tokens_per_second: 100, completion_tokens: 32 },
      },
    },
    {
      name: 'vllm with several replicas (urls, each without its trailing slash) and forwardPriority',
      cr: cr('vllm-a', { ...base, type: 'vllm', urls: ['http://vllm-0.vllm:8000/', 'http://vllm-1.vllm:8000'], forwardPriority: true }),
      expected: {
        type: 'vllm',
        id: 'team-a-vllm-a',
        router,
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        urls: ['http://vllm-0.vllm:8000', 'http://vllm-1.vllm:8000'],
        forward_priority: true,
      },
    },
    {
      name: "vllm whose replicas are a Service's ready endpoints: serviceRef carried with the ModelProvider's namespace",
      cr: cr('vllm-a', { ...base, type: 'vllm', serviceRef: { name: 'vllm', port: 'http', path: '/engine' } }),
      expected: {
        type: 'vllm',
        id: 'team-a-vllm-a',
        router,
        model_name: 'meta-llama/Llama-3.1-8B-Instruct',
        service_ref: { namespace: 'team-a', name: 'vllm', port: 'http', scheme: 'http', path: '/engine' },
      },
    },
    {
      name: 'serviceRef and url together are refused: exactly one',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm:8000', serviceRef: { name: 'vllm', port: 8000 } }),
      expected: ['spec.serviceRef: give either the addresses (url or urls) or service_ref, not both'],
    },
    {
      name: 'serviceRef names a port from 1 to 65535, or by a name of letters, digits and -',
      cr: cr('vllm-a', { ...base, type: 'vllm', serviceRef: { name: 'vllm', port: 70000 } }),
      expected: ['spec.serviceRef.port: must be a port from 1 to 65535'],
    },
    {
      name: 'serviceRef is for self-hosted engines only',
      cr: cr('gpt', { ...base, type: 'openai', serviceRef: { name: 'vllm', port: 8000 } }),
      expected: ['spec.serviceRef: is not used for type "openai"'],
    },
    {
      name: 'urls lists no address twice',
      cr: cr('vllm-a', { ...base, type: 'vllm', urls: ['http://vllm:8000', 'http://vllm:8000/'] }),
      expected: ['spec.urls: must not list an address twice'],
    },
    {
      name: 'vllm and tei need a url',
      cr: cr('vllm-a', { ...base, type: 'tei' }),
      expected: ['spec.url: is required for type "tei"'],
    },
    {
      name: 'settings of another type are refused, not ignored',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm:8000', simulator: { latencyMs: 5 } }),
      expected: ['spec.simulator: is not used for type "vllm"'],
    },
    {
      name: 'the simulator has no url',
      cr: cr('sim', { ...base, type: 'simulator', url: 'http://sim' }),
      expected: ['spec.url: is not used for type "simulator"'],
    },
    {
      name: 'the url is a base address: no /v1, http or https only, a string',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm:8000/v1' }),
      expected: ['spec.url: must be the base address without /v1 (the gateway adds the API path)'],
    },
    {
      name: 'a url that is not a string',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 8000 }),
      expected: ['spec.url: Invalid input: expected string, received number'],
    },
    {
      name: 'an ftp url',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'ftp://vllm' }),
      expected: ['spec.url: must be an absolute http:// or https:// URL'],
    },
    {
      name: 'an unknown type, a missing routerRef and model',
      cr: cr('x', { type: 'bedrock' }),
      expected: [
        'spec.routerRef: is required',
        'spec.type: Invalid option: expected one of "openai"|"vllm"|"mistral"|"ollama"|"tei"|"anthropic"|"simulator"',
        'spec.model: is required',
      ],
    },
    {
      name: 'a key Secret needs its name and key',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm', apiKeySecretRef: { name: 'Vllm_Key' } }),
      expected: [
        'spec.apiKeySecretRef.name: must be a Kubernetes object name: lowercase letters, digits, - and ., starting and ending with a letter or digit',
        'spec.apiKeySecretRef.key: is required',
      ],
    },
    {
      name: 'a zone without a built-in factor needs gwpKgPerKwh (named as in the CR)',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm', carbon: { paramsTotalB: 8, zone: 'NOR' } }),
      expected: ['spec.carbon.zone: has no built-in emission factor (known: WOR, FRA, USA, SWE, DEU); set gwpKgPerKwh'],
    },
    {
      name: 'bounds: the timeout',
      cr: cr('vllm-a', { ...base, type: 'vllm', url: 'http://vllm', timeoutSeconds: 0 }),
      expected: ['spec.timeoutSeconds: must be more than 0 seconds'],
    },
    {
      name: 'a provider outside any namespace',
      cr: { metadata: { name: 'vllm-a' }, spec: { ...base, type: 'vllm', url: 'http://vllm' } },
      expected: ['metadata.namespace: is required: a ModelProvider lives in a namespace'],
    },
  ];
  for (const { name, cr: resource, expected } of cases) {
    test(name, () => assert.deepEqual(outcome(providerFromCR(resource, router)), expected));
  }
});

describe('providerId', () => {
  const cases: { namespace: string; name: string; expected: string | RegExp }[] = [
    { namespace: 'team-a', name: 'vllm', expected: 'team-a-vllm' },
    { namespace: 'team-a', name: 'vllm.gpu-1', expected: /^team-a-vllm-gpu-1-[0-9a-f]{8}$/ },
    { namespace: 'n'.repeat(63), name: 'p'.repeat(200), expected: /^n{54}-[0-9a-f]{8}$/ },
    { namespace: 'team-a', name: `${'p'.repeat(46)}-${'x'.repeat(20)}`, expected: /^team-a-p{46}-[0-9a-f]{8}$/ }, // cut at a dash, which goes
  ];
  for (const { namespace, name, expected } of cases) {
    test(`${namespace}/${name.length > 20 ? `${name.slice(0, 8)}...` : name} -> ${expected}`, () => {
      const id = providerId(namespace, name);
      if (typeof expected === 'string') assert.equal(id, expected);
      else assert.match(id, expected);
      assert.ok(ResourceId.safeParse(id).success, `${id} is a valid resource id`);
    });
  }

  test('a hashed id tells apart names that read the same once dots are dashes', () => {
    assert.notEqual(providerId('team-a', 'vllm.a'), providerId('team-a', 'vllm-a'));
  });
});

describe('userFromCR', () => {
  const cases: Case[] = [
    {
      name: "nothing set: a user named after the object, unlimited, all routers, the routers' rate limits",
      cr: cr('alice', {}),
      expected: {
        id: 'alice',
        name: 'alice',
        role: 'user',
        team: null,
        budget: null,
        budget_period: null,
        budget_alerts: null,
        soft_budget: false,
        allowed_routers: null,
        priority: null,
        rate_limits: null,
        subjects: null,
      },
    },
    {
      name: "every field; the budget string becomes the gateway's money",
      cr: cr('alice', {
        displayName: 'Alice Martin',
        role: 'admin',
        budget: '25.50',
        budgetPeriod: 'monthly',
        allowedRouters: ['meta-llama/Llama-3.1-8B'],
        rateLimits: { tokensPerMinute: 10_000 },
        priority: -3,
        teamRef: { name: 'research' },
        apiKeySecret: { name: 'alice-key' },
        subjects: ['system:serviceaccount:apps:alice', 'alice@example.com'],
      }),
      expected: {
        id: 'alice',
        name: 'Alice Martin',
        role: 'admin',
        team: 'research',
        budget: '25.5',
        budget_period: 'monthly',
        budget_alerts: null,
        soft_budget: false,
        allowed_routers: ['meta-llama/Llama-3.1-8B'],
        priority: -3,
        rate_limits: { tokens_per_minute: 10_000 },
        subjects: ['system:serviceaccount:apps:alice', 'alice@example.com'],
      },
    },
    {
      name: 'an empty list of routers allows none',
      cr: cr('bob', { allowedRouters: [] }),
      expected: {
        id: 'bob',
        name: 'bob',
        role: 'user',
        team: null,
        budget: null,
        budget_period: null,
        budget_alerts: null,
        soft_budget: false,
        allowed_routers: [],
        priority: null,
        rate_limits: null,
        subjects: null,
      },
    },
    {
      name: 'a negative budget is refused',
      cr: cr('alice', { budget: '-5' }),
      expected: ['spec.budget: must be a non-negative decimal number written as a string, such as "0.15", with at most 6 decimal places'],
    },
    {
      name: 'a budget as a number is refused: money is a string',
      cr: cr('alice', { budget: 5 }),
      expected: ['spec.budget: Invalid input: expected string, received number'],
    },
    {
      name: 'seven decimals are one too many for a budget',
      cr: cr('alice', { budget: '0.0000001' }),
      expected: ['spec.budget: must be a non-negative decimal number written as a string, such as "0.15", with at most 6 decimal places'],
    },
    {
      name: 'an unknown period and role',
      cr: cr('alice', { budgetPeriod: 'yearly', role: 'root' }),
      expected: [
        'spec.role: Invalid option: expected one of "admin"|"team_admin"|"user"',
        'spec.budgetPeriod: Invalid option: expected one of "daily"|"weekly"|"monthly"',
      ],
    },
    {
      name: 'metadata.name is the user id, so it must be a valid id',
      cr: cr('alice.martin', {}),
      expected: ['metadata.name: must be lowercase letters, digits and -, starting and ending with a letter or digit'],
    },
    {
      name: 'the key Secret is named by a Kubernetes name',
      cr: cr('alice', { apiKeySecret: { name: 'Alice Key' } }),
      expected: [
        'spec.apiKeySecret.name: must be a Kubernetes object name: lowercase letters, digits, - and ., starting and ending with a letter or digit',
      ],
    },
  ];
  for (const { name, cr: resource, expected } of cases) {
    test(name, () => assert.deepEqual(outcome(userFromCR(resource)), expected));
  }
});

describe('teamFromCR', () => {
  test("every field: the team's budget, period, routers, priority and shared limits", () => {
    const translated = teamFromCR(
      cr('research', {
        displayName: 'Research',
        budget: '500.00',
        budgetPeriod: 'monthly',
        allowedRouters: ['chat'],
        priority: 2,
        rateLimits: { requestsPerMinute: 600 },
        oidcGroups: ['research', 'system:serviceaccounts:research'],
        oidcAdminGroups: ['research-leads'],
      }),
    );
    assert.deepEqual(translated.ok && translated.value, {
      id: 'research',
      name: 'Research',
      budget: '500',
      budget_period: 'monthly',
      budget_alerts: null,
      soft_budget: false,
      allowed_routers: ['chat'],
      priority: 2,
      rate_limits: { requests_per_minute: 600 },
      oidc_groups: ['research', 'system:serviceaccounts:research'],
      oidc_admin_groups: ['research-leads'],
    });
  });

  test('nothing set: an unlimited team named after the object', () => {
    const translated = teamFromCR(cr('ops', {}));
    assert.deepEqual(translated.ok && translated.value, {
      id: 'ops',
      name: 'ops',
      budget: null,
      budget_period: null,
      budget_alerts: null,
      soft_budget: false,
      allowed_routers: null,
      priority: 0,
      rate_limits: null,
      oidc_groups: null,
      oidc_admin_groups: null,
    });
  });

  test('a budget as a number is refused, at its field', () => {
    assert.deepEqual(outcome(teamFromCR(cr('ops', { budget: 5 }))), ['spec.budget: Invalid input: expected string, received number']);
  });
});

test('describeProblems joins the problems into one condition message', () => {
  const translation = providerFromCR(cr('x', { type: 'vllm', model: 'm', routerRef: { name: 'r' } }), 'r');
  assert.equal(translation.ok, false);
  assert.equal(describeProblems(translation.ok ? [] : translation.problems), 'spec.url: is required for type "vllm"');
  assert.equal(
    describeProblems([
      { path: ['spec', 'costs', 'promptTokens'], message: 'is wrong' },
      { path: ['spec', 'aliases', 2], message: 'is long' },
    ]),
    'spec.costs.promptTokens: is wrong; spec.aliases[2]: is long',
  );
});

describe('the examples in examples/kubernetes', () => {
  const dir = fileURLToPath(new URL('../../../../../examples/kubernetes/', import.meta.url));
  const objects = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) => loadAll(readFileSync(`${dir}/${name}`, 'utf8')) as { kind: string; metadata: { name: string }; spec?: unknown }[]);
  const inNamespace = (object: { metadata: { name: string }; spec?: unknown }): CustomResource => ({
    metadata: { ...object.metadata, namespace: 'default' },
    spec: object.spec,
  });
  const routers = objects.filter((o) => o.kind === 'ModelRouter');

  test('hold a router, two providers, a Secret, a team and a user', () => {
    assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      'GatewayTeam/research',
      'GatewayUser/alice',
      'ModelProvider/llama-simulator',
      'ModelProvider/llama-vllm',
      'ModelRouter/llama-3-1-8b',
      'Secret/vllm-api-key',
    ]);
  });

  for (const object of objects.filter((o) => o.kind !== 'Secret')) {
    test(`${object.kind}/${object.metadata.name} translates to a gateway resource`, () => {
      const resource = inNamespace(object);
      let translation: Translation<unknown>;
      if (object.kind === 'ModelRouter') translation = routerFromCR(resource);
      else if (object.kind === 'GatewayUser') translation = userFromCR(resource);
      else if (object.kind === 'GatewayTeam') translation = teamFromCR(resource);
      else {
        const routerRef = (object.spec as { routerRef: { name: string } }).routerRef.name;
        const router = routers.find((r) => r.metadata.name === routerRef);
        assert.ok(router, `router ${routerRef} is among the examples`);
        const called = routerFromCR(inNamespace(router));
        assert.ok(called.ok);
        translation = providerFromCR(resource, called.value.name);
      }
      assert.deepEqual(translation.ok ? [] : translation.problems, []);
    });
  }
});

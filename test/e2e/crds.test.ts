// The generated CRDs on a real API server (kube-apiserver 1.20 with etcd): they are accepted and
// established, the examples apply and get the schema's defaults, `kubectl get` prints the
// columns, the status subresource takes status, invalid objects are refused with the schema's
// message, and `kubectl explain` teaches the fields from their descriptions.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { crdFiles } from '../../core/resources/kubernetes/crds.ts';

const ROOT = new URL('../../', import.meta.url);
const path = (relative: string) => fileURLToPath(new URL(relative, ROOT));
const NAMESPACE = 'tollgate-crds';

describe('CRDs on a real API server', () => {
  let plane: ControlPlane;
  const kubectl = (args: string[], input?: string) => plane.kubectl(args, input === undefined ? {} : { input });
  const inNamespace = (args: string[], input?: string) => kubectl(['-n', NAMESPACE, ...args], input);
  /** Creates an object with client-side validation off, so that what refuses it is the API server. */
  const create = (object: unknown) => inNamespace(['create', '--validate=false', '-f', '-'], JSON.stringify(object));

  before(async () => {
    plane = await startControlPlane();
    await kubectl(['apply', '-f', path('crds/')]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      ...crdFiles().map((f) => `crd/${f.path.replace(/^crds\/|\.yaml$/g, '')}`),
    ]);
    await kubectl(['create', 'namespace', NAMESPACE]);
  });
  after(async () => {
    await plane?.stop();
  });

  it('serves the three kinds under tollgate.dev/v1alpha1 with their short names and category', async () => {
    const resources = await kubectl(['api-resources', '--api-group=tollgate.dev', '--no-headers']);
    const rows = resources
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .sort((a, b) => a[0]!.localeCompare(b[0]!));
    assert.deepEqual(rows, [
      ['gatewayteams', 'gt', 'tollgate.dev/v1alpha1', 'true', 'GatewayTeam'],
      ['gatewayusers', 'gu', 'tollgate.dev/v1alpha1', 'true', 'GatewayUser'],
      ['modelproviders', 'mp', 'tollgate.dev/v1alpha1', 'true', 'ModelProvider'],
      ['modelrouters', 'mr', 'tollgate.dev/v1alpha1', 'true', 'ModelRouter'],
    ]);
  });

  it("applies the examples, and the server fills in the schema's defaults", async () => {
    const examples = readdirSync(path('examples/kubernetes/')).filter((name) => name.endsWith('.yaml'));
    assert.deepEqual(examples.sort(), [
      'gatewayteam.yaml',
      'gatewayuser.yaml',
      'modelproviders.yaml',
      'modelrouter.yaml',
      'vllm-api-key.yaml',
    ]);
    await inNamespace(['apply', '-f', path('examples/kubernetes/')]);

    const simulator = JSON.parse(await inNamespace(['get', 'modelprovider', 'llama-simulator', '-o', 'json']));
    assert.deepEqual(simulator.spec, {
      routerRef: { name: 'llama-3-1-8b' },
      type: 'simulator',
      model: 'simulated-llama',
      simulator: { latencyMs: 200, tokensPerSecond: 50, completionTokens: 64 },
    });
    const vllm = JSON.parse(await inNamespace(['get', 'mp', 'llama-vllm', '-o', 'json']));
    assert.deepEqual(vllm.spec.carbon, { paramsTotalB: 8, zone: 'FRA', pue: 1.2 });
    assert.deepEqual(
      vllm.spec.healthCheck,
      { enabled: true, intervalSeconds: 15, timeoutSeconds: 5, unhealthyAfter: 2, healthyAfter: 1 },
      'the example turns health checks on; the server fills in their defaults',
    );

    await create({
      apiVersion: 'tollgate.dev/v1alpha1',
      kind: 'ModelRouter',
      metadata: { name: 'bare' },
      spec: { type: 'text-embeddings-inference' },
    });
    const bare = JSON.parse(await inNamespace(['get', 'mr', 'bare', '-o', 'json']));
    assert.deepEqual(bare.spec, {
      type: 'text-embeddings-inference',
      aliases: [],
      fallbacks: [],
      loadBalancingStrategy: 'shuffle',
      costs: { promptTokens: '0', completionTokens: '0' },
      maxContextLength: 8192,
    });
    const user = JSON.parse(await inNamespace(['get', 'gu', 'alice', '-o', 'json']));
    assert.equal(user.spec.budget, '25.00');

    // Every field of a GatewayUser is optional: without a spec, the server fills in an empty one with its defaults.
    await create({ apiVersion: 'tollgate.dev/v1alpha1', kind: 'GatewayUser', metadata: { name: 'bob' } });
    assert.deepEqual(JSON.parse(await inNamespace(['get', 'gu', 'bob', '-o', 'jsonpath={.spec}'])), { role: 'user' });
  });

  it('takes status through the status subresource only, checked by the status schema, and prints it', async () => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (status: string, reason: string, message: string) => ({
      type: 'Ready',
      status,
      observedGeneration: 1,
      lastTransitionTime: now,
      reason,
      message,
    });
    const ready = condition('True', 'Serving', 'Serving requests.');
    const patchStatus = (resource: string, status: unknown) =>
      inNamespace(['patch', resource, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);

    await patchStatus('modelrouter/llama-3-1-8b', {
      observedGeneration: 1,
      conditions: [ready],
      providers: { ready: 1, total: 2 },
      publicName: 'meta-llama/Llama-3.1-8B-Instruct',
      routingMode: 'queue',
      queueDepth: 3,
    });
    await patchStatus('modelprovider/llama-simulator', { observedGeneration: 1, conditions: [ready] });
    await patchStatus('modelprovider/llama-vllm', {
      observedGeneration: 1,
      conditions: [condition('False', 'Unhealthy', 'health check failed: the backend could not be reached (ECONNREFUSED)')],
    });
    await patchStatus('gatewayuser/alice', {
      observedGeneration: 1,
      conditions: [ready],
      spent: '1.25',
      remaining: '23.75',
      requests: 7,
      lastRequestTime: now,
      apiKeySecretName: 'alice-api-key',
    });

    assert.deepEqual(table(await inNamespace(['get', 'modelrouters', 'llama-3-1-8b'])), [
      ['NAME', 'TYPE', 'STRATEGY', 'MODE', 'QUEUE', 'PROVIDERS-READY', 'PROVIDERS-TOTAL', 'READY', 'AGE'],
      ['llama-3-1-8b', 'text-generation', 'least_busy', 'queue', '3', '1', '2', 'True', AGE],
    ]);
    assert.deepEqual(
      table(await inNamespace(['get', 'mr', 'llama-3-1-8b', '-o', 'wide'])).map((row) => row.at(-1)),
      ['MODEL', 'meta-llama/Llama-3.1-8B-Instruct'],
    );
    assert.deepEqual(table(await inNamespace(['get', 'mp', '--sort-by=.metadata.name'])), [
      ['NAME', 'ROUTER', 'TYPE', 'UPSTREAM-MODEL', 'READY', 'REASON', 'AGE'],
      ['llama-simulator', 'llama-3-1-8b', 'simulator', 'simulated-llama', 'True', 'Serving', AGE],
      ['llama-vllm', 'llama-3-1-8b', 'vllm', 'meta-llama/Llama-3.1-8B-Instruct', 'False', 'Unhealthy', AGE],
    ]);
    assert.deepEqual(table(await inNamespace(['get', 'gu', 'alice'])), [
      ['NAME', 'BUDGET', 'SPENT', 'REMAINING', 'READY', 'AGE'],
      ['alice', '25.00', '1.25', '23.75', 'True', AGE],
    ]);
    // The category lists all four kinds.
    const all = await inNamespace(['get', 'tollgate', '-o', 'name']);
    assert.deepEqual(all.trim().split('\n').sort(), [
      'gatewayteam.tollgate.dev/research',
      'gatewayuser.tollgate.dev/alice',
      'gatewayuser.tollgate.dev/bob',
      'modelprovider.tollgate.dev/llama-simulator',
      'modelprovider.tollgate.dev/llama-vllm',
      'modelrouter.tollgate.dev/bare',
      'modelrouter.tollgate.dev/llama-3-1-8b',
    ]);

    // A status written through the main resource is dropped; the status schema refuses bad money.
    await inNamespace(['patch', 'gatewayuser/alice', '--type=merge', '-p', JSON.stringify({ status: { spent: '99' } })]);
    assert.equal(await inNamespace(['get', 'gu', 'alice', '-o', 'jsonpath={.status.spent}']), '1.25');
    await assert.rejects(patchStatus('gatewayuser/alice', { spent: '-1' }), (error: Error) => {
      assert.ok(
        error.message.includes(
          String.raw`status.spent: Invalid value: "-1": status.spent in body should match '^(0|[1-9][0-9]{0,14})(\.[0-9]{1,6})?$'`,
        ),
        error.message,
      );
      return true;
    });
  });

  // Not tested here: a condition with an empty message, which metav1.Condition allows and real
  // 1.20 clusters accept. The test kube-apiserver (1.20.2 built with Go 1.19) refuses "" in any
  // string field as "null": its vendored kube-openapi typeValidator treats a value equal to its
  // type's zero as null. Until the build patches that (vendor/k8s.io/kube-openapi/pkg/validation/
  // validate/type.go), the operator always writes a non-empty condition message.

  const refused: { name: string; object: Record<string, unknown>; messages: string[] }[] = [
    {
      name: 'a negative budget string',
      object: user('negative-budget', { budget: '-5' }),
      messages: [String.raw`spec.budget: Invalid value: "-5": spec.budget in body should match '^(0|[1-9][0-9]{0,14})(\.[0-9]{1,6})?$'`],
    },
    {
      name: 'a budget as a number',
      object: user('number-budget', { budget: 5 }),
      messages: ['spec.budget: Invalid value: "integer": spec.budget in body must be of type string: "integer"'],
    },
    {
      name: 'an unknown provider type',
      object: provider('bedrock', { routerRef: { name: 'llama-3-1-8b' }, type: 'bedrock', model: 'm' }),
      messages: [
        'spec.type: Unsupported value: "bedrock": supported values: "openai", "vllm", "mistral", "ollama", "tei", "anthropic", "simulator"',
      ],
    },
    {
      name: 'a url that is not a string',
      object: provider('numeric-url', { routerRef: { name: 'llama-3-1-8b' }, type: 'vllm', model: 'm', url: 8000 }),
      messages: ['spec.url: Invalid value: "integer": spec.url in body must be of type string: "integer"'],
    },
    {
      name: 'a missing routerRef',
      object: provider('no-router', { type: 'simulator', model: 'm' }),
      messages: ['spec.routerRef: Required value'],
    },
    {
      name: 'a key Secret without its key',
      object: provider('half-key', {
        routerRef: { name: 'llama-3-1-8b' },
        type: 'openai',
        model: 'gpt-4o',
        apiKeySecretRef: { name: 'openai' },
      }),
      messages: ['spec.apiKeySecretRef.key: Required value'],
    },
    {
      name: 'a price with ten decimals, an unknown strategy and a context length of 0',
      object: router('bad-router', {
        type: 'text-generation',
        costs: { promptTokens: '0.0000000001' },
        loadBalancingStrategy: 'random',
        maxContextLength: 0,
      }),
      messages: [
        String.raw`spec.costs.promptTokens: Invalid value: "0.0000000001": spec.costs.promptTokens in body should match '^(0|[1-9][0-9]{0,14})(\.[0-9]{1,9})?$'`,
        'spec.loadBalancingStrategy: Unsupported value: "random": supported values: "shuffle", "round_robin", "least_busy"',
        'spec.maxContextLength: Invalid value: 0: spec.maxContextLength in body should be greater than 0',
      ],
    },
    {
      name: 'a router without spec',
      object: { apiVersion: 'tollgate.dev/v1alpha1', kind: 'ModelRouter', metadata: { name: 'no-spec' } },
      messages: ['spec: Required value'],
    },
    {
      name: 'a user whose name cannot be a user id',
      object: user('alice.martin', {}),
      messages: [`metadata.name: Invalid value: "alice.martin": metadata.name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`],
    },
  ];
  for (const { name, object, messages } of refused) {
    it(`refuses ${name}, with the schema's message`, async () => {
      await assert.rejects(create(object), (error: Error) => {
        for (const message of messages) assert.ok(error.message.includes(message), `expected\n  ${message}\nin\n  ${error.message}`);
        return true;
      });
    });
  }

  it('kubectl explain teaches the fields from their descriptions', async () => {
    // kubectl wraps descriptions at 80 columns: compare with the whitespace folded.
    const explain = async (field: string) => (await kubectl(['explain', field])).replace(/\s+/g, ' ');
    const costs = await explain('modelrouter.spec.costs');
    assert.ok(
      costs.includes(
        'DESCRIPTION: Prices per one million tokens (and per minute of audio), in the money of user budgets. Absent prices are 0 (free).',
      ),
      costs,
    );
    assert.ok(
      costs.includes(
        'promptTokens <string> Price per one million prompt (input) tokens, as a decimal string with at most 9 decimal places, e.g. "0.15".',
      ),
      costs,
    );
    assert.ok(
      costs.includes(
        'completionTokens <string> Price per one million completion (output) tokens, as a decimal string with at most 9 decimal places, e.g. "0.60".',
      ),
      costs,
    );
    const ref = await explain('mp.spec.apiKeySecretRef');
    assert.ok(
      ref.includes(
        "DESCRIPTION: Where the backend's API key is: a key of a Secret in the same namespace. Absent: requests go without a key.",
      ),
      ref,
    );
    assert.ok(ref.includes("key <string> -required- Key of the API key in the Secret's data."), ref);
    const budget = await explain('gatewayuser.spec.budget');
    assert.ok(budget.includes('as a decimal string with at most 6 decimal places, e.g. "25.50". Absent: unlimited.'), budget);
  });
});

function router(name: string, spec: unknown) {
  return { apiVersion: 'tollgate.dev/v1alpha1', kind: 'ModelRouter', metadata: { name }, spec };
}
function provider(name: string, spec: unknown) {
  return { apiVersion: 'tollgate.dev/v1alpha1', kind: 'ModelProvider', metadata: { name }, spec };
}
function user(name: string, spec: unknown) {
  return { apiVersion: 'tollgate.dev/v1alpha1', kind: 'GatewayUser', metadata: { name }, spec };
}

const AGE = '<age>';

/** `kubectl get` output as rows of cells (columns are separated by two or more spaces); ages read as <age>. */
function table(text: string): string[][] {
  return text
    .trim()
    .split('\n')
    .map((line) =>
      line
        .trim()
        .split(/\s{2,}/)
        .map((cell) => (/^(\d+[smh])+$/.test(cell) ? AGE : cell)),
    );
}

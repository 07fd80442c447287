// A Service's EndpointSlices as a provider's replicas: ready addresses only (ready unset counts as
// ready), at the port named (by name from each slice, by number as given), IPv6 in brackets, the
// scheme and path of the reference, each address once; the routing table serves one route per
// address, none when none is ready (every replica down, not a router of the wrong type), and a
// replica that stays keeps its state across rebuilds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { ServiceRef } from '../../../core/resources/service-ref.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../../core/resources/snapshot.ts';
import { replicaUrlsFromSlices, type EndpointSlice } from '../../../core/kubernetes/endpoint-slices.ts';
import { servicesNamed, withReplicas } from '../../../gateway/kubernetes/service-replicas.ts';
import { ProviderStates } from '../../../gateway/routing/provider-state.ts';
import { RoutingTable } from '../../../gateway/routing/routing-table.ts';

const slice = (name: string, endpoints: EndpointSlice['endpoints'], ports: EndpointSlice['ports'] = [{ name: 'http', port: 8000 }]) => ({
  metadata: { name, namespace: 'ns' },
  addressType: 'IPv4',
  endpoints,
  ports,
});

describe('replica URLs from EndpointSlices', () => {
  const cases: { name: string; ref: unknown; slices: EndpointSlice[]; expected: string[] }[] = [
    {
      name: 'ready addresses, unset ready counts as ready, unready ones are left out, sorted',
      ref: { name: 'vllm', port: 'http' },
      slices: [
        slice('vllm-a', [
          { addresses: ['10.0.0.2'], conditions: { ready: true } },
          { addresses: ['10.0.0.1'], conditions: {} },
          { addresses: ['10.0.0.3'], conditions: { ready: false } },
        ]),
      ],
      expected: ['http://10.0.0.1:8000', 'http://10.0.0.2:8000'],
    },
    {
      name: 'across slices, each address once',
      ref: { name: 'vllm', port: 'http' },
      slices: [slice('vllm-a', [{ addresses: ['10.0.0.1'] }]), slice('vllm-b', [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.4'] }])],
      expected: ['http://10.0.0.1:8000', 'http://10.0.0.4:8000'],
    },
    {
      name: 'a port by name: a slice without that port serves none',
      ref: { name: 'vllm', port: 'metrics' },
      slices: [
        slice('vllm-a', [{ addresses: ['10.0.0.1'] }]),
        slice('vllm-b', [{ addresses: ['10.0.0.2'] }], [{ name: 'metrics', port: 9100 }]),
      ],
      expected: ['http://10.0.0.2:9100'],
    },
    {
      name: 'a port by number is the replicas own port, as given',
      ref: { name: 'vllm', port: 8080, scheme: 'https', path: '/engine/' },
      slices: [slice('vllm-a', [{ addresses: ['10.0.0.1'] }])],
      expected: ['https://10.0.0.1:8080/engine'],
    },
    {
      name: 'IPv6 addresses in brackets',
      ref: { name: 'vllm', port: 'http' },
      slices: [{ ...slice('vllm-a', [{ addresses: ['fd00::1'] }]), addressType: 'IPv6' }],
      expected: ['http://[fd00::1]:8000'],
    },
    {
      name: 'no slice, or slices without endpoints: no replica',
      ref: { name: 'vllm', port: 'http' },
      slices: [slice('vllm-a', undefined)],
      expected: [],
    },
  ];
  for (const { name, ref, slices, expected } of cases) {
    test(name, () => assert.deepEqual(replicaUrlsFromSlices(ServiceRef.parse(ref), slices), expected));
  }
});

describe('service_ref in the schema', () => {
  const base = { id: 'p', router: 'chat', type: 'vllm', model_name: 'm' };
  const problems = (input: object) => {
    const parsed = ProviderSpec.safeParse({ ...base, ...input });
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  test('exactly one of url, urls and service_ref', () => {
    assert.deepEqual(problems({ service_ref: { name: 'vllm', port: 8000 } }), []);
    assert.deepEqual(problems({ url: 'http://a:1', service_ref: { name: 'vllm', port: 8000 } }), [
      'service_ref: give either the addresses (url or urls) or service_ref, not both',
    ]);
    assert.deepEqual(problems({ urls: ['http://a:1'], service_ref: { name: 'vllm', port: 8000 } }), [
      'service_ref: give either the addresses (url or urls) or service_ref, not both',
    ]);
  });

  test('bad names, ports and paths are said clearly', () => {
    assert.deepEqual(problems({ service_ref: { name: 'Vllm', port: 0 } }), [
      'service_ref.name: must be a Service name: lowercase letters, digits and -, starting with a letter',
      'service_ref.port: must be a port from 1 to 65535',
    ]);
    assert.deepEqual(problems({ service_ref: { name: 'vllm', port: 'HTTP' } }), [
      'service_ref.port: must be a port number, or a port name: lowercase letters, digits and -, at least one letter',
    ]);
    assert.deepEqual(problems({ service_ref: { name: 'vllm', port: 8000, path: '/v1' } }), [
      'service_ref.path: must not end with /v1 (the gateway adds the API path)',
    ]);
  });
});

describe('the routing table of a provider naming a Service', () => {
  const router = RouterSpec.parse({ name: 'chat', type: 'text-generation' });
  const provider = ProviderSpec.parse({
    id: 'ns-vllm',
    router: 'chat',
    type: 'vllm',
    model_name: 'm',
    service_ref: { namespace: 'ns', name: 'vllm', port: 'http' },
  });
  const snapshot: Snapshot = { format: SNAPSHOT_FORMAT, version: 'v1', routers: [router], providers: [provider] };

  test('the Services named, each once', () => {
    assert.deepEqual(servicesNamed({ ...snapshot, providers: [provider, { ...provider, id: 'other' }] }, 'default'), [
      { namespace: 'ns', name: 'vllm' },
    ]);
  });

  test('one route per ready address, keyed by address; none ready: no route, yet the endpoint is served', () => {
    const states = new ProviderStates();
    const two = RoutingTable.build(
      withReplicas(snapshot, () => ['http://10.0.0.1:8000', 'http://10.0.0.2:8000']),
      states,
    );
    assert.deepEqual(
      two.providerList.map((p) => [p.key, p.spec.type !== 'simulator' && p.spec.url]),
      [
        ['ns-vllm@http://10.0.0.1:8000', 'http://10.0.0.1:8000'],
        ['ns-vllm@http://10.0.0.2:8000', 'http://10.0.0.2:8000'],
      ],
    );
    const none = RoutingTable.build(
      withReplicas(snapshot, () => []),
      states,
    );
    assert.deepEqual(none.providerList, []);
    assert.deepEqual(none.lookup('chat')!.byEndpoint.get('chat'), []);
  });

  test('a replica that stays keeps its state (in flight, breaker, health) when another goes', () => {
    const states = new ProviderStates();
    const before = RoutingTable.build(
      withReplicas(snapshot, () => ['http://10.0.0.1:8000', 'http://10.0.0.2:8000']),
      states,
    );
    const kept = before.provider('ns-vllm@http://10.0.0.1:8000')!.state;
    kept.inFlight = 3;
    const after = RoutingTable.build(
      withReplicas(snapshot, () => ['http://10.0.0.1:8000', 'http://10.0.0.3:8000']),
      states,
    );
    assert.equal(after.provider('ns-vllm@http://10.0.0.1:8000')!.state, kept);
    assert.equal(after.provider('ns-vllm@http://10.0.0.3:8000')!.state.inFlight, 0);
    assert.equal(after.provider('ns-vllm@http://10.0.0.2:8000'), undefined);
  });
});

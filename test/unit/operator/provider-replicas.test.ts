// A ModelProvider's ready replicas, as its status shows them (kubectl get modelproviders -o wide):
// its Service's ready endpoints (only the slices of that Service in that namespace) when it names
// one, the addresses it lists otherwise, one for the simulator, unknown without a slice cache;
// providerStatus writes the count, and removes one written before when it can no longer tell.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndpointSlice } from '../../../core/kubernetes/endpoint-slices.ts';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { condition } from '../../../operator/reconcile/conditions.ts';
import { readyReplicas } from '../../../operator/reconcile/provider-replicas.ts';
import { providerStatus } from '../../../operator/reconcile/routing-status.ts';

const NOW = new Date('2026-11-10T12:00:00Z');
const base = { id: 'p', router: 'chat', model_name: 'm' };
const slice = (namespace: string, service: string, ready: boolean[]): EndpointSlice => ({
  metadata: { name: `${service}-${ready.length}`, namespace, labels: { 'kubernetes.io/service-name': service } },
  endpoints: ready.map((r, i) => ({ addresses: [`10.0.0.${i + 1}`], conditions: { ready: r } })),
  ports: [{ name: 'http', port: 8000 }],
});
const cache = (slices: EndpointSlice[]) => ({ list: () => slices, get: () => undefined });

test("a Service's ready endpoints, of that Service in that namespace only", () => {
  const spec = ProviderSpec.parse({ ...base, type: 'vllm', service_ref: { namespace: 'team-a', name: 'vllm', port: 'http' } });
  const slices = cache([slice('team-a', 'vllm', [true, false, true]), slice('team-b', 'vllm', [true]), slice('team-a', 'other', [true])]);
  assert.equal(readyReplicas(spec, 'team-a', slices), 2);
  assert.equal(readyReplicas(spec, 'team-a', cache([])), 0);
  assert.equal(readyReplicas(spec, 'team-a', undefined), undefined);
});

test('the addresses listed, else one; the simulator is one', () => {
  assert.equal(readyReplicas(ProviderSpec.parse({ ...base, type: 'vllm', urls: ['http://a:1', 'http://b:1'] }), 'ns', undefined), 2);
  assert.equal(readyReplicas(ProviderSpec.parse({ ...base, type: 'vllm', url: 'http://a:1' }), 'ns', undefined), 1);
  assert.equal(readyReplicas(ProviderSpec.parse({ ...base, type: 'openai' }), 'ns', undefined), 1);
  assert.equal(readyReplicas(ProviderSpec.parse({ ...base, type: 'simulator' }), 'ns', undefined), 1);
});

test('providerStatus writes the count; unknown removes one written before, and adds nothing otherwise', () => {
  const accepted = [condition('Accepted', true, 'Accepted', 'ok')];
  assert.equal(providerStatus({ metadata: { generation: 1 } }, accepted, NOW, 3).replicas, 3);
  assert.ok(!('replicas' in providerStatus({ metadata: { generation: 1 } }, accepted, NOW)));
  assert.equal(providerStatus({ metadata: { generation: 1 }, status: { replicas: 2 } }, accepted, NOW).replicas, null);
});

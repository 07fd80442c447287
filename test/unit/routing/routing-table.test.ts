// The routing table's fallback chains: a router's fallbacks in order, each followed by its own
// (depth first), each router once, the router itself never; aliases name the same router.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RouterSpec } from '../../../core/resources/router.ts';
import { SNAPSHOT_FORMAT } from '../../../core/resources/snapshot.ts';
import { ProviderStates } from '../../../gateway/routing/provider-state.ts';
import { RoutingTable } from '../../../gateway/routing/routing-table.ts';

function table(routers: Record<string, { fallbacks?: string[]; aliases?: string[]; context_fallback?: boolean }>): RoutingTable {
  const specs = Object.entries(routers).map(([name, fields]) => RouterSpec.parse({ name, type: 'text-generation', ...fields }));
  return RoutingTable.build({ format: SNAPSHOT_FORMAT, version: 'v1', routers: specs, providers: [] }, new ProviderStates());
}

const chainOf = (t: RoutingTable, name: string) => t.lookup(name)!.fallbacks.map((r) => r.spec.name);

test("a fallback's own fallbacks come right after it, before the router's next fallback", () => {
  const t = table({ a: { fallbacks: ['b', 'c'] }, b: { fallbacks: ['d'] }, c: {}, d: {} });
  assert.deepEqual(chainOf(t, 'a'), ['b', 'd', 'c']);
  assert.deepEqual(chainOf(t, 'b'), ['d']);
  assert.deepEqual(chainOf(t, 'c'), []);
});

test('a router reached twice is tried once, where it is first reached; an alias is its router', () => {
  const t = table({ a: { fallbacks: ['b', 'dee'] }, b: { fallbacks: ['d'] }, d: { aliases: ['dee'] } });
  assert.deepEqual(chainOf(t, 'a'), ['b', 'd']);
});

test('context fallback is on by default with fallbacks, off without, and as set when set', () => {
  const t = table({ a: { fallbacks: ['b'] }, b: {}, c: { fallbacks: ['b'], context_fallback: false } });
  assert.equal(t.lookup('a')!.contextFallback, true);
  assert.equal(t.lookup('b')!.contextFallback, false);
  assert.equal(t.lookup('c')!.contextFallback, false);
});

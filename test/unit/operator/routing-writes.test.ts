// The routing ConfigMap and the provider keys Secret: what the operator applies, and when the
// copy on the server already holds it (then nothing is written: each write wakes every gateway).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ANNOTATIONS, COMPRESS_ABOVE, SNAPSHOT_GZIP_KEY, SNAPSHOT_KEY } from '../../../core/kubernetes/snapshot-configmap.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../../core/resources/snapshot.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import type { ConfigMapObject, SecretObject } from '../../../operator/kube/resources.ts';
import { configMapUpToDate, keysSecretUpToDate, providerKeysSecret, routingConfigMap } from '../../../operator/reconcile/routing-writes.ts';

const TARGET = { namespace: 'tollgate', configMap: 'tollgate-routing', secret: 'tollgate-provider-keys' };
const snapshot = (version: string, routers = 1): Snapshot => ({
  format: SNAPSHOT_FORMAT,
  version,
  routers: Array.from({ length: routers }, (_, i) => RouterSpec.parse({ name: `router-${i}`, type: 'text-generation' })),
  providers: [],
});
/** The object as the server returns it after an apply of `desired`. */
const onServer = (desired: ReturnType<typeof routingConfigMap>): ConfigMapObject =>
  JSON.parse(JSON.stringify({ ...desired, metadata: { ...desired.metadata, resourceVersion: '7' } }));

describe('the routing ConfigMap', () => {
  test('holds the snapshot, its annotations and the managed-by label', () => {
    const desired = routingConfigMap(TARGET, snapshot('v1'));
    assert.deepEqual(JSON.parse(desired.data![SNAPSHOT_KEY]!).version, 'v1');
    assert.equal(desired.metadata.annotations[ANNOTATIONS.version], 'v1');
    assert.equal(desired.metadata.labels['app.kubernetes.io/managed-by'], 'tollgate-operator');
    assert.equal(desired.binaryData, undefined);
  });

  test('is written when absent, or when it holds another snapshot; not when it holds this one', () => {
    const desired = routingConfigMap(TARGET, snapshot('v1'));
    assert.equal(configMapUpToDate(undefined, desired), false);
    assert.equal(configMapUpToDate(onServer(desired), desired), true);
    assert.equal(configMapUpToDate(onServer(routingConfigMap(TARGET, snapshot('v2'))), desired), false);
  });

  test('is written again when someone edited the snapshot or removed its label', () => {
    const desired = routingConfigMap(TARGET, snapshot('v1'));
    const edited = onServer(desired);
    edited.data![SNAPSHOT_KEY] = '{}';
    assert.equal(configMapUpToDate(edited, desired), false);
    const unlabelled = onServer(desired);
    unlabelled.metadata.labels = {};
    assert.equal(configMapUpToDate(unlabelled, desired), false);
  });

  test('a snapshot grown past the threshold moves to binaryData, and the plain copy no longer counts', () => {
    const large = routingConfigMap(TARGET, snapshot('big', Math.ceil(COMPRESS_ABOVE / 100)));
    assert.ok(large.binaryData?.[SNAPSHOT_GZIP_KEY]);
    assert.equal(large.data, undefined);
    const stillPlain = { ...onServer(large), data: { [SNAPSHOT_KEY]: '{}' } };
    assert.equal(configMapUpToDate(stillPlain, large), false);
    assert.equal(configMapUpToDate(onServer(large), large), true);
  });
});

describe('the provider keys Secret', () => {
  const secretOnServer = (
    data: Record<string, string>,
    labels: Record<string, string> = { 'app.kubernetes.io/managed-by': 'tollgate-operator' },
  ): SecretObject => ({
    metadata: { name: TARGET.secret, namespace: TARGET.namespace, labels },
    data: Object.fromEntries(Object.entries(data).map(([id, key]) => [id, Buffer.from(key).toString('base64')])),
  });

  test('holds each key in base64 under its provider id', () => {
    const secret = providerKeysSecret(TARGET, { 'team-vllm': 'sk-1' });
    assert.deepEqual(secret.data, { 'team-vllm': Buffer.from('sk-1').toString('base64') });
    assert.equal(secret.type, 'Opaque');
  });

  const cases: [string, SecretObject | undefined, boolean][] = [
    ['absent', undefined, false],
    ['the same keys', secretOnServer({ a: 'k1', b: 'k2' }), true],
    ['a rotated key', secretOnServer({ a: 'k1', b: 'old' }), false],
    ['the key of a provider gone', secretOnServer({ a: 'k1', b: 'k2', c: 'k3' }), false],
    ['a key missing', secretOnServer({ a: 'k1' }), false],
    ['without the managed-by label', secretOnServer({ a: 'k1', b: 'k2' }, {}), false],
  ];
  for (const [name, current, upToDate] of cases) {
    test(`${name}: ${upToDate ? 'not written' : 'written'}`, () => {
      assert.equal(keysSecretUpToDate(current, { a: 'k1', b: 'k2' }), upToDate);
    });
  }
});

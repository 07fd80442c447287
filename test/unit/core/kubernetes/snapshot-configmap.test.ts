// The routing snapshot in a ConfigMap: what the operator writes is what a gateway reads, a
// snapshot that was tampered with, cut short or of another format is refused, and the largest
// catalog we promise (5,000 routers with 4 providers each) fits in one Kubernetes object.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ANNOTATIONS,
  COMPRESS_ABOVE,
  SNAPSHOT_GZIP_KEY,
  SNAPSHOT_KEY,
  decodeSnapshot,
  encodeSnapshot,
} from '../../../../core/kubernetes/snapshot-configmap.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../../../../core/resources/snapshot.ts';
import { RouterSpec } from '../../../../core/resources/router.ts';
import { ProviderSpec } from '../../../../core/resources/provider.ts';
import { snapshotVersion } from '../../../../core/resources/snapshot-version.ts';

/** The limit on a whole Kubernetes object (etcd's request limit is 1.5 MiB; 1 MiB leaves room). */
const OBJECT_LIMIT = 1024 * 1024;

function catalog(routers: number, providersEach: number): Snapshot {
  const routerSpecs = Array.from({ length: routers }, (_, i) =>
    RouterSpec.parse({
      name: `team-${i % 97}/model-${i}`,
      type: 'text-generation',
      aliases: [`m${i}`],
      costs: { prompt_tokens: 0.15, completion_tokens: 0.6 },
      max_context_length: 131072,
    }),
  );
  const providers = routerSpecs.flatMap((router, i) =>
    Array.from({ length: providersEach }, (_, j) =>
      ProviderSpec.parse({
        id: `ns-${i}-p${j}`,
        router: router.name,
        type: 'vllm',
        model_name: `meta-llama/Llama-3.1-8B-Instruct`,
        url: `http://vllm-${i % 50}-${j}.inference.svc.cluster.local:8000`,
        timeout: 60,
        carbon: { params_total_b: 8, zone: 'FRA' },
      }),
    ),
  );
  const content = { routers: routerSpecs, providers };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}

describe('snapshot ConfigMap', () => {
  test('a small snapshot is plain JSON in data, and reads back the same', () => {
    const snapshot = catalog(3, 2);
    const content = encodeSnapshot(snapshot);
    assert.ok(content.data?.[SNAPSHOT_KEY]);
    assert.equal(content.binaryData, undefined);
    assert.equal(content.annotations[ANNOTATIONS.version], snapshot.version);
    assert.deepEqual(decodeSnapshot(content), { ok: true, snapshot });
  });

  test('5,000 routers with 4 providers each are gzipped and fit in one object', () => {
    const snapshot = catalog(5000, 4);
    const content = encodeSnapshot(snapshot);
    assert.ok(JSON.stringify(snapshot).length > COMPRESS_ABOVE);
    assert.equal(content.data, undefined);
    const size = Buffer.byteLength(JSON.stringify(content));
    assert.ok(size < OBJECT_LIMIT, `the ConfigMap content is ${size} bytes`);
    const decoded = decodeSnapshot(content);
    assert.ok(decoded.ok);
    assert.equal(decoded.snapshot.routers.length, 5000);
    assert.equal(decoded.snapshot.providers.length, 20000);
  });

  const refusals: [string, (c: ReturnType<typeof encodeSnapshot>) => void, RegExp][] = [
    [
      'a snapshot edited after it was written',
      (c) => (c.data![SNAPSHOT_KEY] = c.data![SNAPSHOT_KEY]!.replace('team-0', 'team-X')),
      /checksum/,
    ],
    ['a snapshot cut short', (c) => (c.data![SNAPSHOT_KEY] = c.data![SNAPSHOT_KEY]!.slice(0, 100)), /checksum/],
    ['another format', (c) => (c.annotations[ANNOTATIONS.format] = '2'), /format 2/],
    ['no snapshot at all', (c) => delete c.data, /holds no snapshot/],
    ["a version that is not the content's", (c) => (c.annotations[ANNOTATIONS.version] = 'other'), /version/],
  ];
  for (const [what, spoil, reason] of refusals) {
    test(`refused: ${what}`, () => {
      const content = encodeSnapshot(catalog(2, 1));
      spoil(content);
      const decoded = decodeSnapshot(content);
      assert.equal(decoded.ok, false);
      assert.match((decoded as { reason: string }).reason, reason);
    });
  }

  test('a corrupt compressed snapshot is refused, not thrown', () => {
    const content = encodeSnapshot(catalog(5000, 1));
    content.binaryData![SNAPSHOT_GZIP_KEY] = Buffer.from('not gzip').toString('base64');
    assert.deepEqual(decodeSnapshot(content), { ok: false, reason: 'the compressed snapshot cannot be decompressed' });
  });

  test('a provider key can never be written into the ConfigMap', () => {
    const snapshot = catalog(1, 1);
    snapshot.providers[0] = { ...snapshot.providers[0]!, key: 'sk-secret' };
    assert.throws(() => encodeSnapshot(snapshot), /keys never enter the routing ConfigMap/);
  });

  test('a field added since format 1 is left out at its default, so a gateway of an earlier version reads the snapshot; this one reads it back whole', () => {
    const snapshot = catalog(2, 1);
    snapshot.routers[1] = RouterSpec.parse({ name: 'whisper', type: 'automatic-speech-recognition', costs: { audio_minutes: '0.006' } });
    const content = { routers: snapshot.routers, providers: snapshot.providers };
    const priced = { ...snapshot, version: snapshotVersion(content) };
    const json = encodeSnapshot(priced).data![SNAPSHOT_KEY]!;
    const [chat, whisper] = (JSON.parse(json) as { routers: { costs: object }[] }).routers;
    // What a router's costs were before audio was priced: an earlier gateway's strict schema takes them.
    assert.deepEqual(chat!.costs, { prompt_tokens: '0.15', completion_tokens: '0.6' });
    assert.deepEqual(whisper!.costs, { prompt_tokens: '0', completion_tokens: '0', audio_minutes: '0.006' });
    const read = decodeSnapshot(encodeSnapshot(priced));
    assert.ok(read.ok);
    assert.deepEqual(read.snapshot, priced);
  });
});

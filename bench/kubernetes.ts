// Kubernetes mode timings on the whole system (the harness of test/e2e/system.test.ts: a real
// kube-apiserver 1.20.2 with crds/ and the RBAC of charts/tollgate, one Redis, two operator
// processes and two gateway processes in Kubernetes mode, each with its service account's RBAC):
//
// 1. propagation: the time from `kubectl apply` of a router change (a new alias on a ModelRouter)
//    returning to the first 200 for the new name through EACH gateway, over 20 changes (probe
//    every 10 ms), median and max;
// 2. a large snapshot: 5,000 routers with 4 providers each, encoded with encodeSnapshot as the
//    operator writes it (the operators are stopped first so nothing overwrites it), written to the
//    routing ConfigMap by server-side apply; its size, and the time from the write to each
//    gateway's /readyz showing its version.
//
// Usage: npm run bench:kubernetes   (prepends a dated section to bench/RESULTS.md)
import { execFile } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { snapshotVersion } from '../core/resources/snapshot-version.ts';
import { applyObject } from '../core/kubernetes/kube-client.ts';
import { encodeSnapshot } from '../core/kubernetes/snapshot-configmap.ts';
import { ProviderSpec } from '../core/resources/provider.ts';
import { RouterSpec } from '../core/resources/router.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../core/resources/snapshot.ts';
import { KUBE_APISERVER_VERSION } from '../test/e2e/support/control-plane.ts';
import { NAMESPACE, readyVersion, startSystem, timeToFirst200, type System } from '../test/e2e/support/system.ts';
import { prependSection } from './report.ts';

const CHANGES = 20;
const PROBE_MS = 10;
const ROUTERS = 5_000;
const PROVIDERS_PER_ROUTER = 4;
const TEAM = 'bench';
const RESULTS = new URL('./RESULTS.md', import.meta.url).pathname;
const run = promisify(execFile);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (value: number) => `${value.toFixed(0)} ms`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

function bigSnapshot(): Snapshot {
  const routers = [];
  const providers = [];
  for (let r = 0; r < ROUTERS; r++) {
    const name = `org-${r % 50}/model-${r}`;
    routers.push(
      RouterSpec.parse({ name, type: 'text-generation', aliases: [`m${r}`], costs: { prompt_tokens: '0.10', completion_tokens: '0.30' } }),
    );
    for (let p = 0; p < PROVIDERS_PER_ROUTER; p++) {
      providers.push(
        ProviderSpec.parse({
          router: name,
          id: `ns-${r % 50}-model-${r}-p${p}`,
          type: 'vllm',
          model_name: `model-${r}`,
          url: `http://vllm-${r}-${p}.inference.svc.cluster.local:8000`,
        }),
      );
    }
  }
  const content = { routers, providers };
  return { format: SNAPSHOT_FORMAT, version: snapshotVersion(content), ...content };
}

async function propagation(system: System): Promise<number[][]> {
  const inTeam = (args: string[], input?: string) => system.kubectl(['-n', TEAM, ...args], input);
  await system.kubectl(['create', 'namespace', TEAM]);
  const router = (alias: string) => ({
    apiVersion: 'tollgate.dev/v1alpha1',
    kind: 'ModelRouter',
    metadata: { name: 'bench', namespace: TEAM },
    spec: { name: 'bench', type: 'text-generation', aliases: [alias] },
  });
  await inTeam(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        router('bench-v0'),
        {
          apiVersion: 'tollgate.dev/v1alpha1',
          kind: 'ModelProvider',
          metadata: { name: 'bench-sim', namespace: TEAM },
          spec: { routerRef: { name: 'bench' }, type: 'simulator', model: 'sim' },
        },
      ],
    }),
  );
  for (const gateway of system.gateways) {
    if ((await timeToFirst200(gateway.url, system.adminKey, 'bench-v0', performance.now(), 50, 30_000)) === undefined)
      throw new Error('the first router never reached a gateway');
  }
  const perGateway: number[][] = system.gateways.map(() => []);
  for (let i = 1; i <= CHANGES; i++) {
    const alias = `bench-v${i}`;
    await inTeam(['apply', '-f', '-'], JSON.stringify(router(alias)));
    const applied = performance.now();
    const times = await Promise.all(system.gateways.map((g) => timeToFirst200(g.url, system.adminKey, alias, applied, PROBE_MS, 30_000)));
    for (const [g, time] of times.entries()) {
      if (time === undefined) throw new Error(`change ${i} did not reach gateway ${g} within 30 s`);
      perGateway[g]!.push(time);
    }
    process.stdout.write(`change ${i}: ${times.map((t) => ms(t!)).join(', ')}\n`);
    await sleep(200);
  }
  return perGateway;
}

async function bigReload(system: System) {
  // The operators would write their own state over the ConfigMap: stop them first.
  await Promise.all(system.operators.map((o) => o.kill()));
  const built = performance.now();
  const snapshot = bigSnapshot();
  const content = encodeSnapshot(snapshot);
  const encodeMs = performance.now() - built;
  const json = Buffer.byteLength(JSON.stringify(snapshot));
  const stored = content.binaryData
    ? Buffer.byteLength(Object.values(content.binaryData)[0]!)
    : Buffer.byteLength(Object.values(content.data!)[0]!);
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'tollgate-routing', namespace: NAMESPACE, annotations: content.annotations },
    ...(content.data ? { data: content.data } : {}),
    ...(content.binaryData ? { binaryData: content.binaryData } : {}),
  };
  const objectBytes = Buffer.byteLength(JSON.stringify(object));
  const start = performance.now();
  await applyObject(system.admin, { group: '', version: 'v1', plural: 'configmaps' }, object, { force: true });
  const written = performance.now();
  const reload = await Promise.all(
    system.gateways.map(async (gateway) => {
      while (performance.now() - written < 120_000) {
        if ((await readyVersion(gateway.url)) === snapshot.version) return performance.now();
        await sleep(PROBE_MS);
      }
      throw new Error(`gateway ${gateway.url} did not load the large snapshot within 120 s`);
    }),
  );
  // The last of the 5,000 routers is found by its alias on each gateway (its vLLM backends do not exist: no chat request).
  const probe = await Promise.all(
    system.gateways.map(
      async (g) => (await fetch(`${g.url}/v1/models/m4999`, { headers: { authorization: `Bearer ${system.adminKey}` } })).status,
    ),
  );
  return {
    json,
    stored,
    compressed: content.binaryData !== undefined,
    objectBytes,
    encodeMs,
    writeMs: written - start,
    reloadMs: reload.map((t) => t - written),
    probe,
  };
}

async function machine(): Promise<string> {
  const nproc = await run('nproc').then(
    (r) => r.stdout.trim(),
    () => String(cpus().length),
  );
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // Keep os.cpus()'s name.
  }
  const kernel = await run('uname', ['-sr']).then(
    (r) => r.stdout.trim(),
    () => 'unknown',
  );
  return `${nproc} cores (\`nproc\`), ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${kernel}`;
}

async function main() {
  const started = new Date();
  const system = await startSystem({ operators: 2, gateways: 2 });
  let changes: number[][];
  let big: Awaited<ReturnType<typeof bigReload>>;
  try {
    changes = await propagation(system);
    big = await bigReload(system);
  } finally {
    await system.stop();
  }
  const redisVersion = await run('redis-server', ['--version']).then(
    (r) => /\bv=(\S+)/.exec(r.stdout)?.[1] ?? 'unknown',
    () => 'unknown',
  );
  const all = changes.flat();
  const lines = [
    `## ${started.toISOString().replace('T', ' ').slice(0, 19)} UTC: Kubernetes mode`,
    '',
    '- Command: `npm run bench:kubernetes` (bench/kubernetes.ts)',
    `- Machine: ${await machine()}`,
    `- Software: Node ${process.version}, kube-apiserver ${KUBE_APISERVER_VERSION} with etcd on loopback (test/e2e/support/control-plane.ts), Redis ${redisVersion}`,
    '- System: crds/ and the RBAC of charts/tollgate applied; 2 operator processes (tollgate-operator service account, Lease leader election) and 2 gateway processes in Kubernetes mode (tollgate-gateway service account), one Redis; all on the same machine, unpinned',
    '',
    `### Router change to first successful request (${CHANGES} changes)`,
    '',
    `Each change: \`kubectl apply\` of a ModelRouter with a new alias; from the apply returning to the first 200 for the new alias through each gateway (a chat request every ${PROBE_MS} ms per gateway; the provider is the simulator with no delay).`,
    '',
    '| Gateway | median | max | min |',
    '|---|---:|---:|---:|',
    ...changes.map(
      (times, g) => `| tollgate-gateway-${g} | ${ms(median(times))} | ${ms(Math.max(...times))} | ${ms(Math.min(...times))} |`,
    ),
    `| both | ${ms(median(all))} | ${ms(Math.max(...all))} | ${ms(Math.min(...all))} |`,
    '',
    `### ${ROUTERS.toLocaleString('en')} routers with ${PROVIDERS_PER_ROUTER} providers each`,
    '',
    "Encoded with `encodeSnapshot` (core/kubernetes/snapshot-configmap.ts) and written as admin by server-side apply to the routing ConfigMap, with the operators stopped; reload = from the write returning to each gateway's `/readyz` showing the new version (probed every 10 ms).",
    '',
    `- Snapshot JSON: ${kib(big.json)}; stored ${big.compressed ? 'gzipped, base64 in `binaryData`' : 'in `data`'}: ${kib(big.stored)}; ConfigMap object as sent: ${kib(big.objectBytes)} (limit 1 MiB)`,
    `- Build and encode: ${ms(big.encodeMs)}; API write (server-side apply): ${ms(big.writeMs)}`,
    `- Reload: ${big.reloadMs.map((t, g) => `tollgate-gateway-${g} ${ms(t)}`).join(', ')}`,
    `- \`GET /v1/models/m4999\` afterwards: ${big.probe.join(', ')}`,
    '',
  ];
  const text = lines.join('\n');
  process.stdout.write(`\n${text}\n`);
  await prependSection(RESULTS, text);
}

await main();

// Where the operator's KubeConfig comes from, how API paths are built, and what an API error
// carries. Requests themselves are exercised against a real API server in the e2e tests.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { KubeApiError, loadKubeConfig, objectKey, resourcePath } from '../../../../core/kubernetes/kube-client.ts';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-kube-client-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, server: string, currentContext = name): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server } }],
      users: [{ name, user: { token: `token-${name}` } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      ...(currentContext ? { 'current-context': currentContext } : {}),
    }),
  );
  return path;
}

describe('loadKubeConfig', () => {
  const explicit = kubeconfig('explicit', 'https://explicit.example:6443');
  const fromEnv = kubeconfig('env', 'https://env.example:6443');
  const second = kubeconfig('second', 'https://second.example:6443');
  const serviceAccountDir = join(dir, 'serviceaccount');
  writeFileSync(join(dir, 'token'), 'in-cluster-token');

  const cases: { name: string; settings: Parameters<typeof loadKubeConfig>[0]; server: string }[] = [
    {
      name: 'an explicit path wins over KUBECONFIG and the pod',
      settings: { kubeconfigPath: explicit, kubeconfigEnv: fromEnv, serviceHost: '10.0.0.1', servicePort: '443' },
      server: 'https://explicit.example:6443',
    },
    {
      name: 'KUBECONFIG wins over the pod',
      settings: { kubeconfigEnv: fromEnv, serviceHost: '10.0.0.1', servicePort: '443' },
      server: 'https://env.example:6443',
    },
    {
      name: 'a KUBECONFIG list: the first file sets the current context',
      settings: { kubeconfigEnv: [fromEnv, second].join(delimiter) },
      server: 'https://env.example:6443',
    },
    {
      name: 'in a pod: the service host and port',
      settings: { serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir: dir },
      server: 'https://10.0.0.1:443',
    },
    {
      name: 'in a pod with an IPv6 service address',
      settings: { serviceHost: 'fd00::1', servicePort: '443', serviceAccountDir: dir },
      server: 'https://[fd00::1]:443',
    },
  ];
  for (const { name, settings, server } of cases) {
    test(name, () => {
      assert.equal(loadKubeConfig(settings).getCurrentCluster()?.server, server);
    });
  }

  test('in a pod, the token file is what authenticates', () => {
    const kc = loadKubeConfig({ serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir: dir });
    assert.deepEqual(kc.getCurrentUser()?.authProvider, { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } });
  });

  test('refuses when there is nothing to connect to', () => {
    assert.throws(() => loadKubeConfig({}), /no Kubernetes API to talk to/);
    assert.throws(() => loadKubeConfig({ serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir }), /no service-account token/);
  });
});

describe('resourcePath', () => {
  const configMaps = { group: '', version: 'v1', plural: 'configmaps' };
  const routers = { group: 'tollgate.dev', version: 'v1alpha1', plural: 'modelrouters' };
  const cases: { type: typeof configMaps; where: Parameters<typeof resourcePath>[1]; path: string }[] = [
    { type: configMaps, where: {}, path: '/api/v1/configmaps' },
    { type: configMaps, where: { namespace: 'tollgate' }, path: '/api/v1/namespaces/tollgate/configmaps' },
    {
      type: configMaps,
      where: { namespace: 'tollgate', name: 'tollgate-routing' },
      path: '/api/v1/namespaces/tollgate/configmaps/tollgate-routing',
    },
    { type: routers, where: {}, path: '/apis/tollgate.dev/v1alpha1/modelrouters' },
    {
      type: routers,
      where: { namespace: 'team-a', name: 'chat', subresource: 'status' },
      path: '/apis/tollgate.dev/v1alpha1/namespaces/team-a/modelrouters/chat/status',
    },
  ];
  for (const { type, where, path } of cases) {
    test(path, () => assert.equal(resourcePath(type, where), path));
  }
});

describe('KubeApiError', () => {
  test("carries the status, the Status object's reason and a Retry-After in seconds", () => {
    const error = new KubeApiError(
      { path: '/api/v1/configmaps' },
      429,
      '{"kind":"Status","reason":"TooManyRequests","message":"slow down"}',
      '3',
    );
    assert.deepEqual([error.status, error.reason, error.retryAfterSeconds], [429, 'TooManyRequests', 3]);
    assert.equal(error.message, 'GET /api/v1/configmaps: 429 TooManyRequests: slow down');
  });

  test('survives a body that is not a Status and a Retry-After that is not a number', () => {
    const error = new KubeApiError({ method: 'PUT', path: '/x' }, 502, 'Bad Gateway', 'soon');
    assert.deepEqual([error.reason, error.retryAfterSeconds], ['Unknown', undefined]);
  });
});

describe('objectKey', () => {
  test('namespace/name, or the name alone for a cluster-scoped object', () => {
    assert.equal(objectKey({ metadata: { namespace: 'team-a', name: 'chat' } }), 'team-a/chat');
    assert.equal(objectKey({ metadata: { name: 'gadgets.plumbing.tollgate.dev' } }), 'gadgets.plumbing.tollgate.dev');
    assert.throws(() => objectKey({ metadata: {} }), /without metadata.name/);
  });
});

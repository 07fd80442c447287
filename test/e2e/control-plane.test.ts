// Smoke test of the end-to-end harness: a real kube-apiserver with etcd, RBAC enforced for a
// token identity, and a CustomResourceDefinition with a status subresource.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';

const NAMESPACE = 'tollgate-smoke';
const OPERATOR = 'system:serviceaccount:tollgate:tollgate-operator';

describe('e2e control plane', () => {
  let plane: ControlPlane;
  /** kubectl as the operator's token; against an external cluster (no tokens), admin impersonating that user. */
  const asOperator = (args: string[]) =>
    plane.external
      ? plane.kubectl(['--as', OPERATOR, '--as-group', 'system:serviceaccounts', '--as-group', 'system:serviceaccounts:tollgate', ...args])
      : plane.kubectl(args, { as: 'operator' });

  before(async () => {
    plane = await startControlPlane({ tokens: { operator: OPERATOR } });
  });
  after(async () => {
    await plane?.stop();
  });

  it('serves the API to the admin identity', async () => {
    await plane.kubectl(['create', 'namespace', NAMESPACE]);
    await plane.kubectl(['-n', NAMESPACE, 'create', 'configmap', 'settings', '--from-literal=mode=smoke']);
    const mode = await plane.kubectl(['-n', NAMESPACE, 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}']);
    assert.equal(mode, 'smoke');
  });

  it('refuses a token identity that no RBAC rule grants anything', async () => {
    await assert.rejects(asOperator(['-n', NAMESPACE, 'get', 'configmaps']), (error: Error) => {
      assert.match(error.message, /Forbidden/);
      assert.match(error.message, new RegExp(OPERATOR));
      return true;
    });
  });

  it('lets that identity read ConfigMaps once a Role and RoleBinding grant it', async () => {
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: 'configmap-reader', namespace: NAMESPACE },
            rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
          },
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name: 'operator-reads-configmaps', namespace: NAMESPACE },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-reader' },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: OPERATOR }],
          },
        ],
      }),
    });
    const mode = await asOperator(['-n', NAMESPACE, 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}']);
    assert.equal(mode, 'smoke');
    // `get` only: listing stays forbidden.
    await assert.rejects(asOperator(['-n', NAMESPACE, 'get', 'configmaps']), /Forbidden/);
  });

  it('accepts a CustomResourceDefinition and a custom resource of it, with its status subresource', async () => {
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.smoke.tollgate.dev' },
        spec: {
          group: 'smoke.tollgate.dev',
          names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1alpha1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      required: ['size'],
                      properties: {
                        size: { type: 'integer', minimum: 1 },
                        color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                      },
                    },
                    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
                  },
                },
              },
            },
          ],
        },
      }),
    });
    await plane.kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.smoke.tollgate.dev']);

    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'smoke.tollgate.dev/v1alpha1',
        kind: 'Widget',
        metadata: { name: 'first', namespace: NAMESPACE },
        spec: { size: 3 },
      }),
    });
    const widget = JSON.parse(await plane.kubectl(['-n', NAMESPACE, 'get', 'widget', 'first', '-o', 'json']));
    assert.deepEqual(widget.spec, { size: 3, color: 'red' }, 'the schema default applies');

    // The status subresource: status is written through it, not through the main resource.
    await plane.kubectl(['-n', NAMESPACE, 'patch', 'widget', 'first', '--type=merge', '-p', '{"status":{"ready":true}}']);
    assert.equal(await plane.kubectl(['-n', NAMESPACE, 'get', 'widget', 'first', '-o', 'jsonpath={.status.ready}']), '');
    const statusPath = `/apis/smoke.tollgate.dev/v1alpha1/namespaces/${NAMESPACE}/widgets/first/status`;
    if (plane.adminToken) {
      // Over HTTPS from Node, as the operator will talk to the API: the CA file verifies the server.
      const response = await apiRequest(plane, 'PATCH', statusPath, { status: { ready: true } });
      assert.equal(response.status, 200, response.body);
    } else {
      // An external cluster whose kubeconfig authenticates otherwise than by token (kubectl 1.24+).
      await plane.kubectl([
        '-n',
        NAMESPACE,
        'patch',
        'widget',
        'first',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"ready":true}}',
      ]);
    }
    assert.equal(await plane.kubectl(['-n', NAMESPACE, 'get', 'widget', 'first', '-o', 'jsonpath={.status.ready}']), 'true');

    // The structural schema is enforced.
    await assert.rejects(
      plane.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'smoke.tollgate.dev/v1alpha1',
          kind: 'Widget',
          metadata: { name: 'bad', namespace: NAMESPACE },
          spec: { size: 0 },
        }),
      }),
      /spec\.size/,
    );
  });
});

/** One request with the admin token, verifying the server with plane.caFile. */
function apiRequest(plane: ControlPlane, method: string, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, plane.url),
      {
        method,
        headers: { authorization: `Bearer ${plane.adminToken}`, 'content-type': 'application/merge-patch+json' },
        ...(plane.insecureSkipTlsVerify ? { rejectUnauthorized: false } : { ca: plane.caFile ? readFileSync(plane.caFile) : undefined }),
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

// The RBAC of charts/tollgate, for the end-to-end tests: the chart rendered with defaults as the
// release `tollgate` in the namespace `tollgate` (as `helm install tollgate charts/tollgate -n
// tollgate` would), keeping its ServiceAccounts, Roles, ClusterRoles and bindings. The tests'
// operator and gateway processes authenticate as those service accounts, so they hold exactly
// the rules a cluster install grants: a permission missing from the chart fails a test.
import { parseObjects, renderChart, type KubeObject } from '../../support/helm.ts';
import { KUBE_APISERVER_VERSION, type ControlPlane } from './control-plane.ts';

export const RELEASE_NAMESPACE = 'tollgate';
const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** The chart's RBAC objects, as rendered for the release `tollgate` in the namespace `tollgate`. */
export async function chartRbac(): Promise<KubeObject[]> {
  const rendered = await renderChart({ release: 'tollgate', namespace: RELEASE_NAMESPACE, kubeVersion: `v${KUBE_APISERVER_VERSION}` });
  return parseObjects(rendered).filter((object) => RBAC_KINDS.has(object.kind));
}

/**
 * Creates the release namespace and applies the chart's RBAC as admin. Each of `users` (service
 * account user names, system:serviceaccount:NS:NAME, the identities of the test's tokens) must be
 * a subject of the chart's bindings: a renamed service account fails here, not as a vague 403 later.
 */
export async function applyChartRbac(plane: ControlPlane, users: readonly string[]): Promise<void> {
  const objects = await chartRbac();
  const bound = new Set(
    objects
      .flatMap((object) => (object.subjects ?? []) as { kind: string; name: string; namespace: string }[])
      .filter((subject) => subject.kind === 'ServiceAccount')
      .map((subject) => `system:serviceaccount:${subject.namespace}:${subject.name}`),
  );
  const unbound = users.filter((user) => !bound.has(user));
  if (unbound.length > 0) throw new Error(`charts/tollgate binds no rules to ${unbound.join(', ')} (it binds ${[...bound].join(', ')})`);
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NAMESPACE } };
  await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [namespace, ...objects] }) });
}

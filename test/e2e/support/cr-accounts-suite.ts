// The account directory's contract (test/integration/accounts/directory-contract.ts) on Kubernetes
// mode's directory, CrAccounts, against a real kube-apiserver and a real Redis (or Redis Cluster):
// it writes GatewayUser and GatewayTeam resources as the gateway's identity (the chart's RBAC), and
// the operator, a process of its own as its identity, puts them into Redis, where the directory
// reads them back. The same suite runs on the store's directory (store-accounts.test.ts), so what
// the admin API does with accounts is the same in both modes, but for when a write is read back.
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createKubeClient, loadKubeConfig } from '../../../core/kubernetes/kube-client.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { CrAccounts } from '../../../gateway/kubernetes/cr-accounts.ts';
import { NamespaceResources } from '../../../gateway/kubernetes/namespace-resources.ts';
import { describeAccountDirectoryContract } from '../../integration/accounts/directory-contract.ts';
import { startRedis } from '../../support/redis-server.ts';
import { startRedisCluster } from '../../support/redis-cluster.ts';
import { applyChartRbac, RELEASE_NAMESPACE } from './chart-rbac.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { until } from './poll.ts';

const GATEWAY_USER = `system:serviceaccount:${RELEASE_NAMESPACE}:tollgate-gateway`;
const OPERATOR_USER = `system:serviceaccount:${RELEASE_NAMESPACE}:tollgate-operator`;

/**
 * Declares the suite on a kube-apiserver and the operator, over one Redis or a Redis Cluster
 * (three primaries, a replica each); call at the top level of a test file.
 */
export function describeCrAccounts(on: 'one Redis' | 'a Redis Cluster'): void {
  let plane: ControlPlane;
  let redis: { readonly url: string; stop(): Promise<void> };
  let store: RedisStore;
  let operator: OperatorProcess | undefined;
  let directory: CrAccounts;

  before(async () => {
    plane = await startControlPlane({ tokens: { gateway: GATEWAY_USER, operator: OPERATOR_USER } });
    redis = on === 'one Redis' ? await startRedis() : await startRedisCluster();
    await plane.kubectl(['apply', '-f', fileURLToPath(new URL('../../../crds/', import.meta.url))]);
    await plane.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/gatewayusers.tollgate.dev',
      'crd/gatewayteams.tollgate.dev',
    ]);
    await applyChartRbac(plane, [GATEWAY_USER, OPERATOR_USER]);
    store = await RedisStore.connect(redis.url, { usageRetentionMs: 86_400_000 });
    // Against a cluster we did not start there are no tokens: the tests then act as admin.
    const as = (name: string) => (plane.external ? plane.kubeconfig() : plane.kubeconfig(name));
    const started = startOperatorProcess({ identity: 'op-accounts', kubeconfig: as('operator'), redisUrl: redis.url });
    operator = started;
    await until(
      async () => {
        const base = started.healthUrl();
        return base !== undefined && (await fetch(`${base}/readyz`)).status === 200;
      },
      'the operator ready (caches synced)',
      [started],
    );
    const client = createKubeClient(loadKubeConfig({ kubeconfigPath: as('gateway') }));
    directory = new CrAccounts(new NamespaceResources(client, RELEASE_NAMESPACE), store.accounts);
  });

  after(async () => {
    await operator?.kill();
    await store?.close();
    await redis?.stop();
    await plane?.stop();
  });

  describeAccountDirectoryContract(`CrAccounts on a kube-apiserver, with the operator, on ${on}`, {
    // One cluster and one Redis for all the tests: each test's ids are its own.
    make: async () => ({
      directory,
      seedUser: async (user) => void (await store.accounts.createUser(user, new Date())),
      close: async () => {},
    }),
    requiresKnownTeam: false,
    settleMs: 30_000,
    output: () => operator?.output() ?? '',
  });
}

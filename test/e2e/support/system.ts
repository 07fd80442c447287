// The whole system as it runs in a cluster, for the system end-to-end test and the Kubernetes
// benchmark (bench/kubernetes.ts): a control plane with crds/ and the RBAC of charts/tollgate
// applied as admin, one Redis, N operator processes authenticated as the tollgate-operator
// service account and M gateway processes in Kubernetes mode authenticated as the
// tollgate-gateway service account, and optionally router worker processes (queue mode) as the
// tollgate-router-worker one (each bound only to the rules the chart renders), all sharing the
// Redis. The gateways get one bootstrap admin key, so a probe can call them before any
// GatewayUser exists.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { createKubeClient, loadKubeConfig, type KubeClient } from '../../../core/kubernetes/kube-client.ts';
import { decodeSnapshot } from '../../../core/kubernetes/snapshot-configmap.ts';
import type { Snapshot } from '../../../core/resources/snapshot.ts';
import { startGatewayProcess, startWorkerProcess, type GatewayProcess } from '../../support/gateway-process.ts';
import { startRedis, type RunningRedis } from '../../support/redis-server.ts';
import { applyChartRbac } from './chart-rbac.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { getObject } from './poll.ts';
import { CONVERGE_MS, PROCESS_START_MS } from '../../support/patience.ts';

export const NAMESPACE = 'tollgate';
export const OPERATOR_USER = `system:serviceaccount:${NAMESPACE}:tollgate-operator`;
export const GATEWAY_USER = `system:serviceaccount:${NAMESPACE}:tollgate-gateway`;
export const WORKER_USER = `system:serviceaccount:${NAMESPACE}:tollgate-router-worker`;
export const repoPath = (relative: string) => fileURLToPath(new URL(`../../../${relative}`, import.meta.url));

export interface NamedOperator extends OperatorProcess {
  readonly identity: string;
  readonly killed: boolean;
}

export interface System {
  readonly plane: ControlPlane;
  readonly redis: RunningRedis;
  /** Admin client of the API server. */
  readonly admin: KubeClient;
  readonly operators: NamedOperator[];
  readonly gateways: GatewayProcess[];
  /** Router worker processes (queue mode), as the tollgate-router-worker service account. */
  readonly workers: GatewayProcess[];
  /** The gateways' bootstrap admin key (role admin in Redis): a probe that needs no GatewayUser. */
  readonly adminKey: string;
  /** kubectl as admin. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** The snapshot in the routing ConfigMap now; undefined when there is none. */
  snapshot(): Promise<Snapshot | undefined>;
  /** The identity holding the operator's Lease. */
  leaseHolder(): Promise<string | undefined>;
  /** Stops everything started here. Idempotent. */
  stop(): Promise<void>;
}

export interface SystemOptions {
  operators?: number;
  gateways?: number;
  /** Router worker processes; none by default. */
  workers?: number;
}

export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const plane = await startControlPlane({ tokens: { operator: OPERATOR_USER, gateway: GATEWAY_USER, worker: WORKER_USER } });
  let redis: RunningRedis | undefined;
  const operators: NamedOperator[] = [];
  const gateways: GatewayProcess[] = [];
  const workers: GatewayProcess[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all([...gateways, ...workers].map((process) => process.stop()));
    await Promise.all(operators.map((operator) => operator.kill()));
    await redis?.stop();
    await plane.stop();
  };
  try {
    redis = await startRedis();
    const kubectl = (args: string[], input?: string) => plane.kubectl(args, input === undefined ? {} : { input });
    await kubectl(['apply', '-f', repoPath('crds/')]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/modelrouters.tollgate.dev',
      'crd/modelproviders.tollgate.dev',
      'crd/gatewayusers.tollgate.dev',
      'crd/gatewayteams.tollgate.dev',
    ]);
    await applyChartRbac(plane, [OPERATOR_USER, GATEWAY_USER, WORKER_USER]);
    const admin = createKubeClient(loadKubeConfig({ kubeconfigPath: plane.kubeconfig() }));

    for (let i = 0; i < (options.operators ?? 2); i++) {
      const identity = `tollgate-operator-${i}`;
      const process = startOperatorProcess({
        identity,
        kubeconfig: plane.external ? plane.kubeconfig() : plane.kubeconfig('operator'),
        redisUrl: redis.url,
      });
      let killed = false;
      operators.push({
        identity,
        output: process.output,
        healthUrl: process.healthUrl,
        kill: async () => {
          killed = true;
          await process.kill();
        },
        get killed() {
          return killed;
        },
      });
    }
    const adminKey = generateKey().secret;
    // Started one after the other only to keep their logs apart; starting together with the same
    // admin key is safe (test/integration/accounts/bootstrap.test.ts).
    for (let i = 0; i < (options.gateways ?? 2); i++) {
      gateways.push(
        await startGatewayProcess(
          [
            '--kubernetes',
            '--namespace',
            NAMESPACE,
            '--redis-url',
            redis.url,
            '--kubeconfig',
            plane.external ? plane.kubeconfig() : plane.kubeconfig('gateway'),
            '--pod-name',
            `tollgate-gateway-${i}`,
          ],
          { TOLLGATE_ADMIN_KEY: adminKey },
        ),
      );
    }

    for (let i = 0; i < (options.workers ?? 0); i++) {
      workers.push(
        await startWorkerProcess([
          '--kubernetes',
          '--namespace',
          NAMESPACE,
          '--redis-url',
          redis.url,
          '--kubeconfig',
          plane.external ? plane.kubeconfig() : plane.kubeconfig('worker'),
        ]),
      );
    }

    const snapshot = async () => {
      const configMap = await getObject<{
        metadata: { annotations?: Record<string, string> };
        data?: Record<string, string>;
        binaryData?: Record<string, string>;
      }>(admin, 'configmaps', NAMESPACE, 'tollgate-routing');
      if (!configMap) return undefined;
      const decoded = decodeSnapshot({
        annotations: configMap.metadata.annotations ?? {},
        data: configMap.data,
        binaryData: configMap.binaryData,
      });
      if (!decoded.ok) throw new Error(`the routing ConfigMap is refused: ${decoded.reason}`);
      return decoded.snapshot;
    };
    const leaseHolder = async () =>
      (await getObject<{ spec: { holderIdentity?: string } }>(admin, 'leases', NAMESPACE, 'tollgate-operator'))?.spec.holderIdentity;

    // Settled: one operator leads and has written the (empty) routing state, and every gateway
    // serves it, so what follows measures changes, not start-up. The operators were started
    // without waiting: they may still be coming up, then converge.
    const settleMs = PROCESS_START_MS + CONVERGE_MS;
    const deadline = Date.now() + settleMs;
    for (;;) {
      const version = (await snapshot().catch(() => undefined))?.version;
      const served = version === undefined ? [] : await Promise.all(gateways.map((gateway) => readyVersion(gateway.url)));
      if ((await leaseHolder().catch(() => undefined)) && version !== undefined && served.every((v) => v === version)) break;
      if (Date.now() > deadline) {
        throw new Error(
          `the system did not settle within ${settleMs} ms (ConfigMap version ${version}, gateways ${JSON.stringify(served)}):\n${operators.map((o) => o.output().slice(-3000)).join('\n---\n')}`,
        );
      }
      await sleep(200);
    }
    return { plane, redis, admin, operators, gateways, workers, adminKey, kubectl, snapshot, leaseHolder, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The snapshot version a gateway's /readyz reports; undefined while not ready or unreachable. */
export async function readyVersion(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/readyz`);
    const body = (await response.json()) as { snapshot?: string };
    return response.status === 200 ? body.snapshot : undefined;
  } catch {
    return undefined;
  }
}

export interface ChatAnswer {
  status: number;
  body: any;
}

/** One non-streamed chat request; a connection failure answers status 0. */
export async function chat(url: string, key: string, model: string, maxTokens = 4): Promise<ChatAnswer> {
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: maxTokens }),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: kept as text.
    }
    return { status: response.status, body };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

/**
 * Milliseconds from `since` (a performance.now() value) until `model` first answers 200 through
 * the gateway at `url`, trying every `intervalMs`; undefined after `timeoutMs`.
 */
export async function timeToFirst200(
  url: string,
  key: string,
  model: string,
  since: number,
  intervalMs: number,
  timeoutMs: number,
): Promise<number | undefined> {
  while (performance.now() - since < timeoutMs) {
    const tried = performance.now();
    if ((await chat(url, key, model)).status === 200) return performance.now() - since;
    const waited = performance.now() - tried;
    if (waited < intervalMs) await sleep(intervalMs - waited);
  }
  return undefined;
}

// Bounded polling for end-to-end tests of processes that converge: a probe is retried until it
// gives a value, or the test fails saying what it waited for, what the probe last threw, and
// what the processes involved last wrote.
import { isStatus, resourcePath, type KubeClient } from '../../../core/kubernetes/kube-client.ts';
import { eventually } from '../../support/eventually.ts';
import { CONVERGE_MS } from '../../support/patience.ts';

export function until<T>(
  probe: () => Promise<T | undefined | null | false>,
  what: string,
  processes: readonly { output(): string }[] = [],
  timeoutMs = CONVERGE_MS,
): Promise<T> {
  return eventually(probe, what, { processes, timeoutMs, intervalMs: 200 }) as Promise<T>;
}

const TYPES: Record<string, { group: string; version: string }> = {
  configmaps: { group: '', version: 'v1' },
  secrets: { group: '', version: 'v1' },
  leases: { group: 'coordination.k8s.io', version: 'v1' },
  modelrouters: { group: 'tollgate.dev', version: 'v1alpha1' },
  modelproviders: { group: 'tollgate.dev', version: 'v1alpha1' },
  gatewayusers: { group: 'tollgate.dev', version: 'v1alpha1' },
  gatewayteams: { group: 'tollgate.dev', version: 'v1alpha1' },
};

/** The object as the server has it now; undefined when there is none. */
export async function getObject<T>(client: KubeClient, plural: string, namespace: string, name: string): Promise<T | undefined> {
  const type = TYPES[plural];
  if (!type) throw new Error(`unknown resource ${plural}`);
  try {
    return await client.request<T>({ path: resourcePath({ ...type, plural }, { namespace, name }) });
  } catch (error) {
    if (isStatus(error, 404)) return undefined;
    throw error;
  }
}

export interface TestCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}

/** A custom resource as the tests read it: metadata and the status fields the operator writes. */
export interface Conditioned {
  metadata: { name: string; generation?: number; finalizers?: string[] };
  status?: {
    observedGeneration?: number;
    conditions?: TestCondition[];
    publicName?: string;
    providers?: { ready: number; total: number };
    apiKeySecretName?: string;
    spent?: string;
    remaining?: string;
    requests?: number;
    lastRequestTime?: string;
  };
}

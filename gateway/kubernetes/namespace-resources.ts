// The custom resources the admin API writes in Kubernetes mode, in the one namespace it writes to:
// server-side apply as the gateway's field manager, reads and deletes that tell "not there" from a
// failure, and the API server's refusals turned into the admin API's errors. Shared by the
// routers' and providers' writer (cr-catalog.ts) and the users' and teams' (cr-accounts.ts).
import { HttpMethod } from '@kubernetes/client-node';
import { API_VERSION } from '../../core/resources/kubernetes/crd-schemas.ts';
import { ConflictError } from '../../core/store/store-errors.ts';
import {
  applyObject,
  GATEWAY_FIELD_MANAGER,
  isStatus,
  KubeApiError,
  resourcePath,
  type KubeClient,
  type ResourceType,
} from '../../core/kubernetes/kube-client.ts';
import { InvalidResourceError, KubernetesWriteError } from './write-errors.ts';

export class NamespaceResources {
  readonly client: KubeClient;
  readonly namespace: string;

  constructor(client: KubeClient, namespace: string) {
    this.client = client;
    this.namespace = namespace;
  }

  /** Creates or changes the resource `name` of `kind` to hold `spec`. */
  apply<T = unknown>(type: ResourceType, kind: string, name: string, spec: object): Promise<T> {
    // force: an admin's edit through the API wins over a value last set with kubectl.
    return applyObject<T>(
      this.client,
      type,
      { apiVersion: API_VERSION, kind, metadata: { name, namespace: this.namespace }, spec },
      {
        force: true,
        fieldManager: GATEWAY_FIELD_MANAGER,
      },
    );
  }

  async list<T>(type: ResourceType): Promise<T[]> {
    const list = await this.client.request<{ items: T[] }>({ path: resourcePath(type, { namespace: this.namespace }) });
    return list.items;
  }

  /** Undefined if there is no such resource. */
  async get<T>(type: ResourceType, name: string): Promise<T | undefined> {
    try {
      return await this.client.request<T>({ path: resourcePath(type, { namespace: this.namespace, name }) });
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /** False if it was not there. */
  async delete(type: ResourceType, name: string): Promise<boolean> {
    try {
      await this.client.request({ method: HttpMethod.DELETE, path: resourcePath(type, { namespace: this.namespace, name }) });
      return true;
    } catch (error) {
      if (isStatus(error, 404)) return false;
      throw error;
    }
  }
}

/** An answer of the API server as the admin API's: 422 is the caller's, anything else the gateway's. */
export async function kubeErrors<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof KubeApiError)) throw error;
    if (error.status === 422) throw new InvalidResourceError(`The Kubernetes API refused the resource: ${error.message}`);
    if (error.status === 409) throw new ConflictError(`The Kubernetes API refused the write: ${error.message}`);
    throw new KubernetesWriteError(error.message, { cause: error });
  }
}

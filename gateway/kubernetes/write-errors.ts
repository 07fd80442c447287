// Why the admin API's write of a resource failed in Kubernetes mode, told apart by whose it is to
// fix. How a caller is told is decided in one place, gateway/pipeline/error-map.ts.

/** The resource cannot be written as sent: the caller must change it (`message` is written for them). */
export class InvalidResourceError extends Error {
  override name = 'InvalidResourceError';
  /** The field at fault, when one is. */
  readonly param: string | null;

  constructor(message: string, param: string | null = null) {
    super(message);
    this.param = param;
  }
}

/** The Kubernetes API server failed the write for a reason that is not the caller's (`message` is its reason). */
export class KubernetesWriteError extends Error {
  override name = 'KubernetesWriteError';
}

// The operator's door to the Kubernetes API: a KubeConfig built from settings passed in, and one
// small JSON client (request, and a line stream for watches) that every other piece uses.
//
// Why not client-node's Watch or generated APIs (2.0.1): Watch aborts any stream silent for a
// fixed, private 30 s, reports a 429 without its headers (so no Retry-After) and drops lines it
// cannot parse without a word. The generated APIs take an AbortSignal only through a custom
// middleware, send a plain Date with milliseconds where a Lease's MicroTime must have exactly six
// fractional digits (the API server answers 400), and hand back timestamps typed Date that are
// strings at run time. KubeConfig still does what it does well: applySecurityAuthentication
// resolves the credentials (token, client certificate, exec plugin, token file) and the TLS
// dispatcher for each request, exactly as client-node's own Watch uses it.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fetch } from 'undici';

export const FIELD_MANAGER = 'tollgate-operator';
/** The field manager of the gateway's writes (the admin API in Kubernetes mode). */
export const GATEWAY_FIELD_MANAGER = 'tollgate-gateway';

// ---------------------------------------------------------------------------------------------
// Configuration

export interface KubeConnectionSettings {
  /** An explicit kubeconfig file (a command-line option); wins over everything else. */
  readonly kubeconfigPath?: string | undefined;
  /** $KUBECONFIG as read at start-up: one path or a list separated by the platform's delimiter. */
  readonly kubeconfigEnv?: string | undefined;
  /** $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT as read at start-up (in a pod). */
  readonly serviceHost?: string | undefined;
  readonly servicePort?: string | undefined;
  /** Where the pod's service-account token and CA are mounted. */
  readonly serviceAccountDir?: string | undefined;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubeconfig path option, then $KUBECONFIG, then the in-cluster service account. */
export function loadKubeConfig(settings: KubeConnectionSettings): KubeConfig {
  const kc = new KubeConfig();
  if (settings.kubeconfigPath) {
    kc.loadFromFile(settings.kubeconfigPath);
  } else if (settings.kubeconfigEnv) {
    loadKubeconfigList(kc, settings.kubeconfigEnv);
  } else if (settings.serviceHost && settings.servicePort) {
    loadInCluster(kc, settings.serviceHost, settings.servicePort, settings.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  } else {
    throw new Error('no Kubernetes API to talk to: give a kubeconfig path, set KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST/PORT)');
  }
  if (!kc.getCurrentCluster()) throw new Error(`the kubeconfig's current context "${kc.getCurrentContext()}" names no cluster`);
  return kc;
}

/** As kubectl reads $KUBECONFIG: the first file that sets the current context wins. */
function loadKubeconfigList(kc: KubeConfig, list: string): void {
  const [first, ...rest] = list.split(delimiter).filter(Boolean);
  if (!first) throw new Error(`KUBECONFIG names no file: ${JSON.stringify(list)}`);
  kc.loadFromFile(first);
  for (const file of rest) {
    const more = new KubeConfig();
    more.loadFromFile(file);
    kc.mergeConfig(more, Boolean(kc.currentContext));
  }
}

function loadInCluster(kc: KubeConfig, host: string, port: string, dir: string): void {
  const tokenFile = join(dir, 'token');
  if (!existsSync(tokenFile)) throw new Error(`in-cluster configuration: no service-account token at ${tokenFile}`);
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // The token-file provider re-reads the file, so a rotated projected token is picked up.
  kc.loadFromClusterAndUser(
    { name: 'in-cluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false },
    { name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } },
  );
}

// ---------------------------------------------------------------------------------------------
// The client

export interface KubeRequest {
  readonly method?: HttpMethod;
  /** Absolute API path, e.g. /api/v1/namespaces/default/configmaps (see resourcePath). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Sent as JSON (which is also valid YAML for apply patches). */
  readonly body?: unknown;
  /** Defaults to application/json when there is a body. */
  readonly contentType?: string;
  /** What the answer may be; application/json unless told (the API server's JWKS is only served as application/jwk-set+json). */
  readonly accept?: string;
  readonly signal?: AbortSignal;
}

/** What the informer, the leader election and the helpers below need from the API. */
export interface KubeClient {
  /** One request; resolves to the parsed JSON answer, rejects with KubeApiError on a non-2xx status. */
  request<T>(request: KubeRequest): Promise<T>;
  /** A streaming GET (a watch): resolves once the headers arrived, to the body's lines. */
  stream(request: KubeRequest): Promise<AsyncIterable<string>>;
}

/** A non-2xx answer, with the fields callers decide on (never its message text). */
export class KubeApiError extends Error {
  readonly status: number;
  /** The Status object's reason, e.g. NotFound, AlreadyExists, Conflict, Expired, TooManyRequests. */
  readonly reason: string;
  /** From the Retry-After header (seconds), on 429 and some 5xx answers. */
  readonly retryAfterSeconds: number | undefined;

  constructor(request: KubeRequest, status: number, body: string, retryAfter: string | null) {
    const parsed = parseStatus(body);
    super(`${request.method ?? 'GET'} ${request.path}: ${status} ${parsed.reason}${parsed.message ? `: ${parsed.message}` : ''}`);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = parsed.reason;
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    this.retryAfterSeconds = Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  }
}

export function isStatus(error: unknown, status: number): error is KubeApiError {
  return error instanceof KubeApiError && error.status === status;
}

function parseStatus(body: string): { reason: string; message: string } {
  try {
    const status = JSON.parse(body) as { reason?: string; message?: string };
    return { reason: status.reason ?? 'Unknown', message: status.message ?? '' };
  } catch {
    return { reason: 'Unknown', message: body.slice(0, 200) };
  }
}

export interface KubeClientOptions {
  /** Bound on every non-streaming request, so a hung connection cannot stall a caller forever. */
  readonly requestTimeoutMs?: number;
}

export function createKubeClient(kc: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  return {
    async request<T>(request: KubeRequest): Promise<T> {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      const response = await send(kc, request, signal);
      const text = await response.text();
      if (!response.ok) throw new KubeApiError(request, response.status, text, response.headers.get('retry-after'));
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async stream(request: KubeRequest): Promise<AsyncIterable<string>> {
      const response = await send(kc, request, request.signal);
      if (!response.ok || !response.body) {
        throw new KubeApiError(request, response.status, await response.text(), response.headers.get('retry-after'));
      }
      return lines(response.body);
    },
  };
}

async function send(kc: KubeConfig, request: KubeRequest, signal: AbortSignal | undefined) {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + request.path);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  const context = new RequestContext(url.toString(), request.method ?? HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  const headers: Record<string, string> = { ...context.getHeaders(), accept: request.accept ?? 'application/json' };
  if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
  return fetch(url, {
    method: request.method ?? 'GET',
    headers,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    dispatcher: context.getDispatcher(),
    signal,
  });
}

/** Newline-delimited text, pulled as the consumer asks for it (so a slow consumer applies backpressure). */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim()) yield line;
    }
  }
  if (buffered.trim()) yield buffered;
}

// ---------------------------------------------------------------------------------------------
// Resource paths and the two kinds of write

/**
 * An object as the API sends it in JSON. Not client-node's KubernetesObject: its V1ObjectMeta
 * types timestamps as Date, which raw JSON (all this client returns) never holds.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [field: string]: unknown;
}

/** The cache key of an object: namespace/name, or name alone for a cluster-scoped object. */
export function objectKey(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  if (!name) throw new Error(`an object without metadata.name: ${JSON.stringify(object).slice(0, 200)}`);
  return namespace ? `${namespace}/${name}` : name;
}

/** A resource type as the API addresses it; group '' is the core group (/api/v1). */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export interface ResourceLocation {
  /** Omitted for all namespaces (lists and watches) or a cluster-scoped resource. */
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  readonly subresource?: string | undefined;
}

export function resourcePath(type: ResourceType, where: ResourceLocation = {}): string {
  const parts = [type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`];
  if (where.namespace) parts.push('namespaces', encodeURIComponent(where.namespace));
  parts.push(type.plural);
  if (where.name) parts.push(encodeURIComponent(where.name));
  if (where.subresource) parts.push(where.subresource);
  return parts.join('/');
}

export interface ApplyObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

/**
 * Server-side apply as `tollgate-operator` (or `options.fieldManager`). `force` takes fields over from other managers: pass
 * it only for objects the operator alone writes (its ConfigMap and Secrets), never for fields a
 * person may also set.
 */
export function applyObject<T>(
  client: KubeClient,
  type: ResourceType,
  object: ApplyObject,
  options: { force: boolean; signal?: AbortSignal; fieldManager?: string },
): Promise<T> {
  return client.request<T>({
    method: HttpMethod.PATCH,
    path: resourcePath(type, { namespace: object.metadata.namespace, name: object.metadata.name }),
    query: { fieldManager: options.fieldManager ?? FIELD_MANAGER, force: options.force ? true : undefined },
    contentType: 'application/apply-patch+yaml',
    body: object,
    signal: options.signal,
  });
}

/** A merge patch of `status` through the status subresource (which ignores everything else). */
export function patchStatus<T>(
  client: KubeClient,
  type: ResourceType,
  where: { namespace?: string; name: string },
  status: unknown,
  signal?: AbortSignal,
): Promise<T> {
  return client.request<T>({
    method: HttpMethod.PATCH,
    path: resourcePath(type, { ...where, subresource: 'status' }),
    query: { fieldManager: FIELD_MANAGER },
    contentType: 'application/merge-patch+json',
    body: { status },
    signal,
  });
}

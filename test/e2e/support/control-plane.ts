// A real Kubernetes control plane for the end-to-end tests: etcd and kube-apiserver 1.20.2 (built
// from Debian's source package by build-kube-apiserver.sh, cached under ~/.cache/tollgate), on
// free loopback ports, with everything (etcd data, certificates, keys, token file, kubeconfigs)
// in one temporary directory that stop() removes.
//
// There is no kubelet, scheduler or controller-manager: no Pods run, owner references are not
// garbage-collected and deleted namespaces stay Terminating. CRDs (v1, structural schemas, status
// subresources), RBAC, Leases, Secrets, ConfigMaps, Events, watch and server-side apply work; CEL
// validation rules (x-kubernetes-validations, Kubernetes 1.25+) do not.
//
// Identities: `admin` (group system:masters) and one bearer token per entry of options.tokens,
// bound to no RBAC rule until a test (or the project's manifests) grants one.
//
// TOLLGATE_E2E_KUBECONFIG=/path/to/kubeconfig runs the tests against an existing cluster instead:
// nothing is started, `admin` is whatever identity that kubeconfig's current context uses, and
// `tokens` is empty (a cluster we did not start has no static token file to add identities to),
// so tests then act as admin.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { findOnPath, isExecutable } from '../../support/executables.ts';
import { PROCESS_START_MS } from '../../support/patience.ts';
import { spawnOwned } from '../../support/owned-process.ts';

export const KUBE_APISERVER_VERSION = '1.20.2';
const BUILD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'build-kube-apiserver.sh');
const ADMIN = 'admin';

export interface TokenIdentity {
  /** The user name the token authenticates as, e.g. system:serviceaccount:tollgate:tollgate-operator. */
  user: string;
  /** Groups besides system:authenticated (which every authenticated user has). */
  groups?: string[];
}

export interface ControlPlaneOptions {
  /**
   * Extra identities, by name: each gets a random bearer token. A plain string is the user name;
   * a service-account user (system:serviceaccount:NS:NAME) also gets the groups a real service
   * account has (system:serviceaccounts, system:serviceaccounts:NS). `admin` is reserved.
   */
  tokens?: Record<string, string | TokenIdentity>;
  /** How long to wait for /readyz; PROCESS_START_MS unless told (about 10 s is usual). */
  startTimeoutMs?: number;
  /** Use this kubeconfig's cluster instead of starting one; defaults to $TOLLGATE_E2E_KUBECONFIG. */
  externalKubeconfig?: string;
}

export interface KubectlOptions {
  /** Identity: `admin` (the default) or a name from options.tokens. */
  as?: string;
  /** Standard input, e.g. a manifest for `apply -f -`. */
  input?: string;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> (or the external cluster's server). */
  readonly url: string;
  /** CA bundle that verifies the server's certificate; undefined when `insecureSkipTlsVerify`. */
  readonly caFile: string | undefined;
  /** True when clients must skip certificate verification (only when the external kubeconfig says so). */
  readonly insecureSkipTlsVerify: boolean;
  /** Bearer token of the admin identity (system:masters); undefined for an external cluster whose kubeconfig does not use a token. */
  readonly adminToken: string | undefined;
  /** Bearer token per name in options.tokens; empty for an external cluster. */
  readonly tokens: Readonly<Record<string, string>>;
  /** True when running against TOLLGATE_E2E_KUBECONFIG rather than a control plane started here. */
  readonly external: boolean;
  /** Path of a kubeconfig file for `admin` (the default) or a name from options.tokens. */
  kubeconfig(name?: string): string;
  /** Runs kubectl as that identity; resolves to its stdout, rejects with its stderr. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<string>;
  /** Stops kube-apiserver and etcd and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const external = options.externalKubeconfig ?? process.env.TOLLGATE_E2E_KUBECONFIG;
  if (external) return useExternalCluster(external);

  const kubeApiserver = await findKubeApiserver();
  const etcdBinary = findOnPath('etcd');
  if (!etcdBinary)
    throw new Error('etcd is not installed: run `apt-get install etcd-server` (or `bash test/support/install-system-deps.sh`)');
  if (!findOnPath('openssl')) throw new Error('openssl is not installed: run `apt-get install openssl`');
  const identities = tokenIdentities(options.tokens ?? {});

  removeAbandonedDirectories();
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await writeFile(join(dir, OWNER_FILE), String(process.pid));
  const plane: LivePlane = { dir, processes: [] };
  const processes = plane.processes;
  registerCleanup(plane);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // The API server first, so it does not spend its last seconds retrying a vanished etcd.
    for (const supervised of [...processes].reverse()) await supervised.terminate();
    await rm(dir, { recursive: true, force: true });
    unregisterCleanup(plane);
  };

  try {
    const certDir = join(dir, 'certs');
    await mkdir(certDir);
    await mkdir(join(dir, 'kubeconfig'));
    const [etcdPort, etcdPeerPort, apiPort] = await freePorts(3);

    // etcd
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcd = supervise('etcd', etcdBinary, [
      '--name',
      'tollgate-e2e',
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-cluster',
      `tollgate-e2e=http://127.0.0.1:${etcdPeerPort}`,
      '--logger',
      'zap',
      '--log-outputs',
      'stderr',
      '--log-level',
      'warn',
    ]);
    processes.push(etcd);

    // Credentials, made while etcd starts.
    const adminToken = randomToken();
    const tokens: Record<string, string> = {};
    const lines = [csvLine(adminToken, 'tollgate-e2e-admin', ['system:masters'])];
    for (const [name, identity] of Object.entries(identities)) {
      tokens[name] = randomToken();
      lines.push(csvLine(tokens[name], identity.user, identity.groups ?? []));
    }
    await writeFile(join(dir, 'tokens.csv'), `${lines.join('\n')}\n`, { mode: 0o600 });
    await run('openssl', ['genrsa', '-out', join(dir, 'sa.key'), '2048']);
    await run('openssl', ['rsa', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);

    await etcd.waitUntil(() => httpOk(`${etcdUrl}/health`), PROCESS_START_MS, 'etcd /health');

    // kube-apiserver
    const apiserver = supervise('kube-apiserver', kubeApiserver, [
      `--etcd-servers=${etcdUrl}`,
      `--secure-port=${apiPort}`,
      '--bind-address=127.0.0.1',
      // 1.20 still opens an unauthenticated port on localhost:8080 unless told not to.
      '--insecure-port=0',
      `--cert-dir=${certDir}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--disable-admission-plugins=ServiceAccount',
      '--v=0',
    ]);
    processes.push(apiserver);
    const url = `https://127.0.0.1:${apiPort}`;
    // Ready, and the `default` namespace (the kubeconfigs' namespace) exists: the API server creates
    // it a moment after /readyz first answers.
    await apiserver.waitUntil(
      async () => (await httpsOk(`${url}/readyz`, adminToken)) && (await httpsOk(`${url}/api/v1/namespaces/default`, adminToken)),
      options.startTimeoutMs ?? PROCESS_START_MS,
      'kube-apiserver /readyz',
    );

    // The server wrote its self-signed certificate, with its CA, into the cert dir.
    const caFile = join(certDir, 'apiserver.crt');
    const kubeconfigs: Record<string, string> = {};
    for (const [name, token] of [[ADMIN, adminToken], ...Object.entries(tokens)] as const) {
      kubeconfigs[name] = join(dir, 'kubeconfig', name);
      await writeFile(kubeconfigs[name], kubeconfigFor(name, url, caFile, token), { mode: 0o600 });
    }
    const cacheDir = join(dir, 'kubectl-cache');
    return {
      url,
      caFile,
      insecureSkipTlsVerify: false,
      adminToken,
      tokens,
      external: false,
      kubeconfig: (name = ADMIN) => lookUp(kubeconfigs, name),
      kubectl: (args, kubectlOptions = {}) =>
        kubectl(lookUp(kubeconfigs, kubectlOptions.as ?? ADMIN), cacheDir, args, kubectlOptions.input),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// An existing cluster

async function useExternalCluster(kubeconfigPath: string): Promise<ControlPlane> {
  if (!existsSync(kubeconfigPath)) throw new Error(`TOLLGATE_E2E_KUBECONFIG names ${kubeconfigPath}, which does not exist`);
  const view = async (jsonpath: string) =>
    (await run('kubectl', ['--kubeconfig', kubeconfigPath, 'config', 'view', '--minify', '--raw', '-o', `jsonpath=${jsonpath}`])).trim();
  const url = await view('{.clusters[0].cluster.server}');
  const insecureSkipTlsVerify = (await view('{.clusters[0].cluster.insecure-skip-tls-verify}')) === 'true';
  const caPath = await view('{.clusters[0].cluster.certificate-authority}');
  const caData = await view('{.clusters[0].cluster.certificate-authority-data}');
  const adminToken = (await view('{.users[0].user.token}')) || undefined;
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-external-cluster-'));
  let caFile: string | undefined = caPath || undefined;
  if (!caFile && caData) {
    caFile = join(dir, 'ca.crt');
    await writeFile(caFile, Buffer.from(caData, 'base64'));
  }
  const kubeconfigs = { [ADMIN]: kubeconfigPath };
  const cacheDir = join(dir, 'kubectl-cache');
  return {
    url,
    caFile: insecureSkipTlsVerify ? undefined : caFile,
    insecureSkipTlsVerify,
    adminToken,
    // Identities with their own tokens exist only on a control plane started here (they come from
    // the API server's --token-auth-file); against an existing cluster, tests act as admin.
    tokens: {},
    external: true,
    kubeconfig: (name = ADMIN) => lookUp(kubeconfigs, name),
    kubectl: (args, kubectlOptions = {}) => kubectl(lookUp(kubeconfigs, kubectlOptions.as ?? ADMIN), cacheDir, args, kubectlOptions.input),
    stop: () => rm(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// Binaries

/** The cached kube-apiserver (or $TOLLGATE_KUBE_APISERVER); built on first use when missing. */
async function findKubeApiserver(): Promise<string> {
  const override = process.env.TOLLGATE_KUBE_APISERVER;
  if (override) return override;
  const cacheHome = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), '.cache');
  const cached = join(cacheHome, 'tollgate', `kube-apiserver-${KUBE_APISERVER_VERSION}`);
  if (isExecutable(cached)) return cached;
  // `npm test` builds it in its pretest step; a direct `node --test` on a fresh machine pays here.
  process.stderr.write(
    `kube-apiserver ${KUBE_APISERVER_VERSION} is not built yet: running ${BUILD_SCRIPT} (a few minutes, once per machine)\n`,
  );
  await new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${BUILD_SCRIPT} failed with exit code ${code}`))));
  });
  if (!isExecutable(cached)) throw new Error(`${BUILD_SCRIPT} succeeded but ${cached} is not there`);
  return cached;
}

// ---------------------------------------------------------------------------------------------
// Child processes, and their end with ours

interface Supervised {
  readonly child: ChildProcess;
  /** Polls `ready` until it resolves true; rejects if the process exits or the time runs out. */
  waitUntil(ready: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited. */
  terminate(): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;

function supervise(name: string, binary: string, args: string[]): Supervised {
  // Killed with ours even if it dies without running any handler (SIGKILL, a crash).
  const child = spawnOwned(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 2 * OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const running = () => child.exitCode === null && child.signalCode === null && !spawnError;
  const tail = () => output.slice(-OUTPUT_LIMIT / 4);

  return {
    child,
    async waitUntil(ready, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (!running()) {
          throw new Error(
            `${name} exited (${spawnError?.message ?? child.exitCode ?? child.signalCode}) before ${what} answered:\n${tail()}`,
          );
        }
        if (await ready()) return;
        await sleep(200);
      }
      throw new Error(`${what} did not answer within ${timeoutMs} ms; ${name}'s last output:\n${tail()}`);
    },
    async terminate() {
      if (!running() || child.pid === undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// Every control plane still running when the test process ends is killed and its directory
// removed, whatever way the process ends. SIGKILL runs no handler: setpriv --pdeathsig kills the
// processes then, and the next startControlPlane removes the directory (its owner.pid is dead).
interface LivePlane {
  readonly dir: string;
  readonly processes: Supervised[];
}
const live = new Set<LivePlane>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const DIR_PREFIX = 'tollgate-control-plane-';
const OWNER_FILE = 'owner.pid';

function killAll(): void {
  for (const { dir, processes } of live) {
    for (const { child } of processes) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
  live.clear();
}

/** Removes the directories of control planes whose test process died by SIGKILL (about 120 MB each: etcd's WAL). */
function removeAbandonedDirectories(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue; // being created right now, or not ours to judge
    }
    if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  removeProcessHooks();
  // Then die of the signal as we would have without this handler, unless someone else handles it.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function removeProcessHooks(): void {
  process.off('exit', killAll);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

function registerCleanup(plane: LivePlane): void {
  if (live.size === 0) {
    process.on('exit', killAll);
    for (const signal of SIGNALS) process.on(signal, onSignal);
  }
  live.add(plane);
}

function unregisterCleanup(plane: LivePlane): void {
  if (!live.delete(plane) || live.size > 0) return;
  removeProcessHooks();
}

// ---------------------------------------------------------------------------------------------
// Helpers

function tokenIdentities(tokens: Record<string, string | TokenIdentity>): Record<string, TokenIdentity> {
  const identities: Record<string, TokenIdentity> = {};
  for (const [name, value] of Object.entries(tokens)) {
    if (name === ADMIN) throw new Error(`the token name "${ADMIN}" is reserved for the admin identity`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
      throw new Error(`token name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`);
    const identity = typeof value === 'string' ? { user: value } : value;
    const serviceAccount = /^system:serviceaccount:([^:]+):[^:]+$/.exec(identity.user);
    identities[name] = {
      user: identity.user,
      groups: identity.groups ?? (serviceAccount ? ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount[1]}`] : []),
    };
  }
  return identities;
}

function csvLine(token: string, user: string, groups: string[]): string {
  for (const field of [user, ...groups]) {
    if (/[",\n]/.test(field)) throw new Error(`${JSON.stringify(field)} cannot go into a token file (no commas or quotes)`);
  }
  return `${token},${user},${user},"${groups.join(',')}"`;
}

function randomToken(): string {
  return randomBytes(24).toString('hex');
}

function kubeconfigFor(name: string, server: string, caFile: string, token: string): string {
  const context = `tollgate-e2e-${name}`;
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'tollgate-e2e', cluster: { server, 'certificate-authority': caFile } }],
      users: [{ name, user: { token } }],
      contexts: [{ name: context, context: { cluster: 'tollgate-e2e', user: name, namespace: 'default' } }],
      'current-context': context,
    },
    null,
    2,
  );
}

function lookUp(kubeconfigs: Record<string, string>, name: string): string {
  const path = kubeconfigs[name];
  if (!path) {
    throw new Error(
      `no identity named ${JSON.stringify(name)}; known: ${Object.keys(kubeconfigs).join(', ')}` +
        (Object.keys(kubeconfigs).length === 1 ? ' (against TOLLGATE_E2E_KUBECONFIG only admin exists)' : ''),
    );
  }
  return path;
}

function kubectl(kubeconfig: string, cacheDir: string, args: readonly string[], input: string | undefined): Promise<string> {
  return run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], input, `kubectl ${args.join(' ')}`);
}

/** Runs a command; resolves to its stdout, rejects with its stderr. */
function run(command: string, args: readonly string[], input?: string, description = `${command} ${args.join(' ')}`): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${description} failed (${error.code ?? error.signal ?? error.message}):\n${stderr || stdout}`, { cause: error }));
      } else {
        resolve(stdout);
      }
    });
    // A child that exits without reading all its input reports why itself (above); the EPIPE
    // of the write must not become an uncaught exception in the test process.
    child.stdin!.on('error', () => {});
    child.stdin!.end(input ?? '');
  });
}

async function freePorts(count: number): Promise<number[]> {
  // Held open together, so the ports differ from each other.
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** GET with a bearer token; the certificate is not checked (it may not be written yet). */
function httpsOk(url: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

// Starts a real gateway on a free loopback port from a YAML configuration, as `tollgate gateway`
// would, and gives the test its URL plus small helpers to call it.
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSettings } from '../../gateway/config/settings.ts';
import { startGateway, type RunningGateway } from '../../gateway/server.ts';
import { generateKey } from '../../core/accounts/api-keys.ts';

export interface TestGateway extends RunningGateway {
  readonly configPath: string;
  /** The bootstrap admin key; post() and get() send it unless given another Authorization. */
  readonly adminKey: string;
  /** Headers that authenticate as the bootstrap admin, for raw fetch calls. */
  readonly auth: Record<string, string>;
  /** POSTs JSON and returns the status, headers and parsed body. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  patch(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  delete(path: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  /** Rewrites the configuration file and reloads it, as SIGHUP does. */
  reconfigure(yaml: string): Promise<void>;
}

export interface TestGatewayOptions {
  env?: Record<string, string>;
  /** Extra settings, as the CLI flags would give them (maxAttempts, cooldownSeconds, bodyLimit, ...). */
  settings?: Record<string, unknown>;
  /** The audio scan threads' module, instead of the gateway's own (test/support/held-probe-worker.ts). */
  audioScanWorker?: URL;
}

export async function startTestGateway(yaml: string, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-test-'));
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, yaml);
  const env = options.env ?? {};
  const adminKey = generateKey().secret;
  const auth = { authorization: `Bearer ${adminKey}` };
  const settings = readSettings({ config: configPath, host: '127.0.0.1', port: 0, logLevel: 'silent', adminKey, ...options.settings }, {});
  const gateway = await startGateway(settings, env, { audioScanWorker: options.audioScanWorker });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(gateway.url + path, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (SSE, metrics): keep the text.
    }
    return { status: response.status, headers: response.headers, body: parsed as any };
  };
  return {
    ...gateway,
    configPath,
    adminKey,
    auth,
    post: (path, body, headers) => call('POST', path, body, headers),
    get: (path, headers) => call('GET', path, undefined, headers),
    patch: (path, body, headers) => call('PATCH', path, body, headers),
    delete: (path, headers) => call('DELETE', path, undefined, headers),
    async reconfigure(next) {
      await writeFile(configPath, next);
      await gateway.reload();
    },
    async close() {
      await gateway.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE body into its `data:` payloads, JSON-parsed where they are JSON. */
export function sseEvents(text: string): any[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => {
      try {
        return JSON.parse(data);
      } catch {
        return data;
      }
    });
}

// Renders charts/tollgate as `helm template` does: with `helm template` when helm is on PATH, else
// with helm-template (test/support/helm-template/, built into ~/.cache/tollgate-tools by
// test/support/install-system-deps.sh), which covers what the chart uses. A rendering that fails
// (a schema violation, a `fail` or `required` in a template) rejects with a HelmError carrying
// helm's own message.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { findOnPath, isExecutable } from './executables.ts';

export const CHART = fileURLToPath(new URL('../../charts/tollgate', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('./helm-template/build.sh', import.meta.url));

export interface RenderOptions {
  /** Release name; `tollgate` unless told (so object names are tollgate-gateway, tollgate-operator...). */
  readonly release?: string;
  /** Release namespace; `tollgate` unless told. */
  readonly namespace?: string;
  /** What .Capabilities.KubeVersion reports, e.g. v1.20.2. */
  readonly kubeVersion?: string;
  /** Values merged over values.yaml, as a file given with -f. */
  readonly values?: object;
  /** --set key=value pairs, typed by helm as it types them on the command line. */
  readonly set?: Readonly<Record<string, string | number | boolean>>;
  /** API versions the cluster is said to serve (helm's --api-versions; helm-template says yes to all). */
  readonly apiVersions?: readonly string[];
  /** Put the chart's crds/ first, as `helm template --include-crds`. */
  readonly includeCrds?: boolean;
  readonly chart?: string;
}

export class HelmError extends Error {
  override name = 'HelmError';
}

/** The rendering as YAML text, documents separated by `---`. */
export async function renderChart(options: RenderOptions = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-helm-'));
  try {
    const flags = ['--namespace', options.namespace ?? 'tollgate'];
    if (options.kubeVersion) flags.push('--kube-version', options.kubeVersion);
    if (options.includeCrds) flags.push('--include-crds');
    if (options.values) {
      const file = join(dir, 'values.json'); // JSON is YAML
      await writeFile(file, JSON.stringify(options.values));
      flags.push('-f', file);
    }
    for (const [key, value] of Object.entries(options.set ?? {})) flags.push('--set', `${key}=${value}`);
    const release = options.release ?? 'tollgate';
    const chart = options.chart ?? CHART;
    const helm = findOnPath('helm');
    if (helm) {
      for (const version of options.apiVersions ?? []) flags.push('--api-versions', version);
      return await run(helm, ['template', release, chart, ...flags]);
    }
    return await run(helmTemplate(), ['--name', release, ...flags, chart]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: any;
}

/** The objects of a rendering, in order. */
export function parseObjects(rendered: string): KubeObject[] {
  return (loadAll(rendered) as (KubeObject | null)[]).filter((object): object is KubeObject => object !== null && object !== undefined);
}

/** Which renderer is used: for test names and failure messages. */
export function rendererName(): string {
  return findOnPath('helm') ? 'helm template' : 'helm-template';
}

function helmTemplate(): string {
  const cacheHome = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), '.cache');
  const binary = join(cacheHome, 'tollgate-tools', 'helm-template');
  if (!isExecutable(binary)) {
    throw new Error(
      `neither helm nor ${binary} is installed: run \`bash ${BUILD_SCRIPT}\` (or \`bash test/support/install-system-deps.sh\`)`,
    );
  }
  return binary;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new HelmError(stderr.trim() || error.message, { cause: error }));
      else resolve(stdout);
    });
  });
}

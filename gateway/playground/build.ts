// Builds the Playground (gateway/playground/web) into dist/playground: one minified script and
// one stylesheet with content hashes in their names (so they can be cached for a year), an
// index.html naming them, and a gzip and a brotli copy of each file that the gateway serves to
// browsers that accept them. Run by `npm run build`; the gateway reads the result at start-up.
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCE = join(ROOT, 'gateway', 'playground', 'web');
export const PLAYGROUND_DIST = join(ROOT, 'dist', 'playground');

export interface BuiltFile {
  readonly path: string;
  readonly raw: number;
  readonly gzip: number;
  readonly brotli: number;
}

/** Builds into `outDir` (emptied first) and returns each file with its sizes. */
export async function buildPlayground(outDir: string = PLAYGROUND_DIST): Promise<BuiltFile[]> {
  await rm(outDir, { recursive: true, force: true });
  const result = await build({
    entryPoints: [join(SOURCE, 'main.tsx')],
    outdir: join(outDir, 'assets'),
    entryNames: 'app-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => `/playground/${relative(outDir, join(ROOT, p)).split('\\').join('/')}`);
  const script = outputs.find((p) => p.endsWith('.js'));
  const style = outputs.find((p) => p.endsWith('.css'));
  if (!script || !style) throw new Error(`esbuild produced no script or no stylesheet: ${outputs.join(', ')}`);
  const template = await readFile(join(SOURCE, 'index.html'), 'utf8');
  await writeFile(join(outDir, 'index.html'), template.replace('%SCRIPT%', script).replace('%STYLE%', style));
  return compressAll(outDir);
}

/** Writes `<file>.gz` and `<file>.br` next to every file, at the highest levels (built once). */
async function compressAll(outDir: string): Promise<BuiltFile[]> {
  const files: BuiltFile[] = [];
  for (const path of await listFiles(outDir)) {
    const body = await readFile(path);
    const gzip = gzipSync(body, { level: 9 });
    const brotli = brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    await writeFile(`${path}.gz`, gzip);
    await writeFile(`${path}.br`, brotli);
    files.push({ path: relative(outDir, path).split('\\').join('/'), raw: body.length, gzip: gzip.length, brotli: brotli.length });
  }
  return files;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Builds unless dist/playground is newer than every source file, so a test run on its own
 * (`node --test file`) serves what the sources say without rebuilding every time.
 */
export async function ensurePlaygroundBuilt(): Promise<void> {
  const built = await stat(join(PLAYGROUND_DIST, 'index.html')).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  const sources = [...(await listFiles(SOURCE)), fileURLToPath(import.meta.url)];
  const newest = Math.max(...(await Promise.all(sources.map(async (p) => (await stat(p)).mtimeMs))));
  if (built < newest) await buildPlayground();
}

function sizeTable(files: readonly BuiltFile[]): string {
  const total = { path: 'total', raw: 0, gzip: 0, brotli: 0 };
  for (const f of files) {
    total.raw += f.raw;
    total.gzip += f.gzip;
    total.brotli += f.brotli;
  }
  const row = (cells: readonly (string | number)[]) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(28) : String(c).padStart(8))).join(' ');
  return [['file (bytes)', 'raw', 'gzip', 'brotli'], ...[...files, total].map((f) => [f.path, f.raw, f.gzip, f.brotli])]
    .map(row)
    .join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildPlayground();
  console.log(`Playground built into ${relative(process.cwd(), PLAYGROUND_DIST) || '.'}\n${sizeTable(files)}`);
}

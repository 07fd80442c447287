// The Playground (spec 1, 2.2): the web UI, served by the gateway itself from dist/playground
// (built by `npm run build`). The handful of small files are read into memory once, at start-up,
// with their gzip and brotli copies, so serving one is a map lookup: no file system access and
// no static-file plugin on the request path, and nothing here touches the inference routes.
// Every answer carries a strict Content-Security-Policy (no inline script or style) and the
// usual hardening headers. The UI keeps the API key in sessionStorage and sends it as a header;
// nothing under /playground takes or needs a key.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../api/api-error.ts';
import { sendError } from '../error-handler.ts';
import { PUBLIC } from '../auth.ts';

/** Where `npm run build` writes the Playground: dist/playground of the package, whether this module runs from the sources or from dist/app. */
export const PLAYGROUND_DIST = join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'dist', 'playground');

/** The nearest folder at or above `from` that holds package.json. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
} as const;

/** Hashed names (app-XXXXXXXX.js) never change content, so browsers may keep them for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current hashed files: always revalidated (cheap, thanks to its ETag). */
const REVALIDATE = 'no-cache';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

type Encoding = 'br' | 'gzip';

interface Asset {
  readonly type: string;
  readonly cacheControl: string;
  readonly etag: string;
  readonly identity: Buffer;
  readonly encoded: Partial<Record<Encoding, Buffer>>;
}

export interface PlaygroundOptions {
  /** The built Playground; default dist/playground of this checkout or image. */
  readonly dir?: string;
}

export function registerPlayground(app: FastifyInstance, options: PlaygroundOptions = {}): void {
  const dir = options.dir ?? PLAYGROUND_DIST;
  const assets = loadAssets(dir);
  if (!assets)
    app.log.warn(
      `The Playground is not built (${dir} has no index.html): /playground answers 503 until \`npm run build\` is run and the gateway restarted`,
    );

  const serve = (path: string, request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(SECURITY_HEADERS);
    if (!assets) return sendError(reply, errors.playgroundNotBuilt());
    const asset = assets.get(path === '' ? 'index.html' : path);
    if (!asset) return sendError(reply, errors.routeNotFound(request.method, request.url));
    const encoding = preferredEncoding(request.headers['accept-encoding'], asset);
    const etag = encoding ? `"${asset.etag}-${encoding}"` : `"${asset.etag}"`;
    reply.headers({ 'content-type': asset.type, 'cache-control': asset.cacheControl, etag, vary: 'accept-encoding' });
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    if (encoding) reply.header('content-encoding', encoding);
    return reply.send(encoding ? asset.encoded[encoding] : asset.identity);
  };

  app.get('/playground', { config: PUBLIC }, (request, reply) => serve('', request, reply));
  app.get<{ Params: { '*': string } }>('/playground/*', { config: PUBLIC }, (request, reply) => serve(request.params['*'], request, reply));
}

/** Every built file by its path under /playground/, or null when there is no build. */
function loadAssets(dir: string): Map<string, Asset> | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || /\.(gz|br)$/.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    const path = relative(dir, file).split('\\').join('/');
    const identity = readFileSync(file);
    const encoded: Partial<Record<Encoding, Buffer>> = {};
    for (const [encoding, suffix] of [
      ['br', '.br'],
      ['gzip', '.gz'],
    ] as const) {
      if (existsSync(file + suffix)) encoded[encoding] = readFileSync(file + suffix);
    }
    assets.set(path, {
      type: TYPES[extname(file)] ?? 'application/octet-stream',
      cacheControl: path.startsWith('assets/') ? IMMUTABLE : REVALIDATE,
      etag: createHash('sha256').update(identity).digest('base64url').slice(0, 22),
      identity,
      encoded,
    });
  }
  return assets;
}

/** Brotli, else gzip, when the browser accepts it (q > 0) and a copy was built. */
function preferredEncoding(header: string | undefined, asset: Asset): Encoding | null {
  if (!header) return null;
  const accepted = new Set(
    header
      .split(',')
      .map((part) => part.trim().split(';'))
      .filter(([, ...params]) => !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p)))
      .map(([name]) => name!.trim().toLowerCase()),
  );
  for (const encoding of ['br', 'gzip'] as const) {
    if ((accepted.has(encoding) || accepted.has('*')) && asset.encoded[encoding]) return encoding;
  }
  return null;
}
